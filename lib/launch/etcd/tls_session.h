// SPDX-License-Identifier: Apache-2.0
// A TLS client session over a connected TCP socket, for an etcd served over https. OpenSSL's
// libssl.so.3 is opened at the first session (dynamic_library.h): the launcher links no TLS
// library, and a machine without one fails only the launches that ask for https, naming it.
// The server's certificate is verified against `ca_cert` (else the system's authorities) and
// must name the host (a DNS name or an IP address); `cert`/`key` are a client certificate for
// servers that ask for one. Every call waits until its deadline at most; failures throw Error
// with OpenSSL's reason, UsageError where the set-up is wrong (a certificate that does not
// verify, a file that does not read). Not thread-safe per session.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "lib/launch/etcd/etcd_place.h"

namespace accel::launch::etcd {

class TlsSession {
 public:
  using Clock = std::chrono::steady_clock;

  // Handshakes over `fd` (non-blocking, connected; not owned).
  TlsSession(int fd, const std::string& host, const TlsFiles& files, Clock::time_point deadline);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  void write(const std::string& data, Clock::time_point deadline);
  // Up to `size` bytes; 0 once the server closed.
  size_t read(char* buffer, size_t size, Clock::time_point deadline);

 private:
  void handshake(const TlsFiles& files, Clock::time_point deadline);
  void release();
  // Runs `step` (an SSL call) until it no longer wants to wait for the socket: its result.
  template <class Step> int drive(Step step, const char* what, Clock::time_point deadline);

  int fd_;
  std::string host_;
  void* ctx_ = nullptr;
  void* ssl_ = nullptr;
};

}  // namespace accel::launch::etcd
