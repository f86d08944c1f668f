// SPDX-License-Identifier: Apache-2.0
// torchrun's --rdzv_conf KEY=VALUE,… read as torchrun's rendezvous handlers read it
// (torch/distributed/elastic/rendezvous: dynamic_rendezvous.create_handler, the c10d backend,
// the static handler, the etcd backends): the keys accel uses, typed, and the keys it accepts
// without using, which the launch names in a note (torchrun ignores keys its handler does not
// read). The etcd keys (etcd-v2's protocol, ca_cert, ssl_cert, ssl_cert_key and read_timeout;
// the legacy handler's cacert, cert, key and etcd_prefix) are read where `etcd` is set. Pure;
// throws UsageError naming `where` ("--rdzv_conf", "PET_RDZV_CONF") and the key.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace accel::launch::settings {

struct RdzvConf {
  std::optional<double> join_timeout;       // how long machines wait for the job's MIN machines
  std::optional<double> last_call_timeout;  // after MIN joined, how long a round waits for more
  std::optional<long long> keep_alive_interval, keep_alive_max_attempt;  // their product: a lost machine
  std::optional<bool> is_host;  // the c10d backend's: this machine hosts the rendezvous (machine 0)
  // etcd: https or http, the server's authority, a client certificate, the keys' prefix, the
  // seconds one call to etcd may take.
  std::optional<bool> https;
  std::optional<std::string> ca_cert, ssl_cert, ssl_cert_key, etcd_prefix;
  std::optional<double> read_timeout;
  std::vector<std::string> unused;  // keys accepted and not read, in order, for the notes
};

RdzvConf parseRdzvConf(const std::string& text, const std::string& where, bool etcd = false);

// torchrun's defaults (dynamic_rendezvous.py): last call 30 s, keep-alive every 5 s, 3 attempts.
inline constexpr double kTorchrunLastCallSeconds = 30;
inline constexpr long long kTorchrunKeepAliveInterval = 5;
inline constexpr long long kTorchrunKeepAliveAttempts = 3;

}  // namespace accel::launch::settings
