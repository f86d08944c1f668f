// SPDX-License-Identifier: Apache-2.0
// Where an etcd rendezvous is (--rdzv_backend etcd with --rdzv_endpoint and --rdzv_conf's
// protocol, ca_cert, ssl_cert, ssl_cert_key, etcd_prefix, read_timeout; ACCEL_ETCD_USER and
// ACCEL_ETCD_PASSWORD): what the settings resolve and the client (etcd_client.h) speaks to.
#pragma once

#include <string>

namespace accel::launch::etcd {

struct TlsFiles {
  std::string ca_cert, cert, key;  // PEM files; "" for none
};

struct HttpServer {
  std::string host;
  int port = 0;
  bool tls = false;
  TlsFiles files;
  std::string text() const;  // "https://10.0.0.1:2379"
};

struct EtcdPlace {
  HttpServer server;
  std::string user, password;          // "" for none; the password is never shown
  std::string prefix = "/accel/rdzv";  // the job's keys are PREFIX/RUN_ID/...
  double call_timeout = 5;             // seconds per call (--rdzv_conf read_timeout)
};

inline constexpr int kEtcdDefaultPort = 2379;

}  // namespace accel::launch::etcd
