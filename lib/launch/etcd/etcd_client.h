// SPDX-License-Identifier: Apache-2.0
// etcd's v3 API over its HTTP/JSON gateway (etcd 3.4 and later): the calls a rendezvous needs
// (keys, prefix reads, create-if-absent, leases, a user's token). Keys and values travel as
// base64, numbers as JSON strings, and fields that hold defaults are left out: read as such.
// Every call is one request within the client's call timeout; a user's token that expired is
// fetched again once. Failures throw Error naming the endpoint and etcd's own message.
// Not thread-safe: one launcher's link owns it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/launch/etcd/http_call.h"

namespace accel::launch::etcd {

struct KeyValue {
  std::string key, value;
  long long create_revision = 0, mod_revision = 0, lease = 0;
};

class EtcdClient {
 public:
  using Clock = std::chrono::steady_clock;
  explicit EtcdClient(EtcdPlace place) : o_(std::move(place)) {}

  // The server's version ("3.4.23"). Throws Error while it cannot be reached, and UsageError
  // when something answers there that is not etcd (HTTP that is not etcd's, or not HTTP).
  std::string version();
  // Signs in with the user, where one is given.
  void authenticate();

  long long grantLease(long long ttl_seconds);
  // The lease's seconds left after the keep-alive; 0 when it had expired.
  long long keepAlive(long long lease);
  void revoke(long long lease);

  std::optional<KeyValue> get(const std::string& key);
  std::vector<KeyValue> list(const std::string& prefix);
  void put(const std::string& key, const std::string& value, long long lease = 0);
  // Puts `key` only where it does not exist: true; else false and `existing` is its value.
  bool create(const std::string& key, const std::string& value, long long lease, std::optional<KeyValue>& existing);
  void remove(const std::string& key);

  const std::string& endpoint() const { return endpoint_; }

 private:
  nlohmann::json call(const std::string& path, const nlohmann::json& body, bool first_chunk_only = false);
  nlohmann::json callOnce(const std::string& path, const nlohmann::json& body, bool first_chunk_only);

  EtcdPlace o_;
  std::string endpoint_ = o_.server.text();
  std::string token_;
};

// The etcd keys' text for a JSON answer's kv ({key, value, create_revision, …}).
KeyValue keyValueOf(const nlohmann::json& kv);

}  // namespace accel::launch::etcd
