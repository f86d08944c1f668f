// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/etcd/etcd_client.h"

#include <fmt/format.h>

#include "lib/common/base64.h"
#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/variables.h"

namespace accel::launch::etcd {

namespace {

using nlohmann::json;

long long number(const json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end()) return 0;
  if (it->is_string()) return std::stoll(it->get<std::string>());
  return it->is_number() ? it->get<long long>() : 0;
}

std::string decoded(const json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string()) return "";
  auto bytes = base64Decode(it->get<std::string>());
  if (!bytes) throw Error(fmt::format("etcd answered a {} that is not base64", field));
  return *bytes;
}

// The first key after every key that starts with `prefix`: etcd's range end for a prefix.
std::string prefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (prefix.empty()) return std::string(1, '\0');
  prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

bool tokenExpired(const json& answer) {
  const std::string message = answer.value("message", answer.value("error", ""));
  return message.find("invalid auth token") != std::string::npos || message.find("auth token") != std::string::npos;
}

}  // namespace

KeyValue keyValueOf(const json& kv) {
  return {decoded(kv, "key"), decoded(kv, "value"), number(kv, "create_revision"), number(kv, "mod_revision"),
          number(kv, "lease")};
}

std::string EtcdClient::version() {
  const auto deadline = Clock::now() + defaults::fromSeconds(o_.call_timeout);
  HttpReply reply;
  try {
    reply = httpCall(o_.server, "GET", "/version", "", {}, deadline);
  } catch (const UsageError& e) {  // TLS set up wrong: say which etcd
    throw UsageError(fmt::format("etcd at {}: {}", endpoint_, e.what()), e.hint());
  } catch (const HttpFailure& f) {
    if (f.kind == HttpFailure::Kind::Unreachable) throw Error(fmt::format("etcd at {}: {}", endpoint_, f.what()));
    throw UsageError(fmt::format("{} is not an etcd server: it answered with {}", endpoint_, f.what()),
                     "give --rdzv_endpoint the host and client port of an etcd server (2379 by default)");
  }
  json j = json::parse(reply.body, nullptr, false);
  if (reply.status != 200 || !j.is_object() || !j.contains("etcdserver") || !j["etcdserver"].is_string()) {
    throw UsageError(fmt::format("{} is not an etcd server: GET /version answered HTTP {} without etcd's version",
                                 endpoint_, reply.status),
                     "give --rdzv_endpoint the host and client port of an etcd server (2379 by default)");
  }
  return j["etcdserver"].get<std::string>();
}

void EtcdClient::authenticate() {
  if (o_.user.empty()) return;
  token_.clear();
  const json answer = callOnce("/v3/auth/authenticate", {{"name", o_.user}, {"password", o_.password}}, false);
  token_ = answer.value("token", "");
  if (token_.empty()) throw Error(fmt::format("etcd at {} gave user {} no token", endpoint_, o_.user));
}

json EtcdClient::call(const std::string& path, const json& body, bool first_chunk_only) {
  try {
    return callOnce(path, body, first_chunk_only);
  } catch (const Error& e) {
    if (o_.user.empty() || std::string(e.what()).find("auth token") == std::string::npos) throw;
  }
  authenticate();
  return callOnce(path, body, first_chunk_only);
}

json EtcdClient::callOnce(const std::string& path, const json& body, bool first_chunk_only) {
  const auto deadline = Clock::now() + defaults::fromSeconds(o_.call_timeout);
  std::vector<std::string> headers;
  if (!token_.empty()) headers.push_back("Authorization: " + token_);
  HttpReply reply;
  try {
    reply = httpCall(o_.server, "POST", path, body.dump(), headers, deadline, first_chunk_only);
  } catch (const HttpFailure& f) {
    throw Error(fmt::format("etcd at {} ({}): {}", endpoint_, path, f.what()));
  }
  json answer = json::parse(reply.body, nullptr, false);
  if (!answer.is_object()) {
    throw Error(
        fmt::format("etcd at {} ({}) answered HTTP {} with something that is not JSON", endpoint_, path, reply.status));
  }
  if (first_chunk_only && answer.contains("result")) answer = answer["result"];
  if (reply.status != 200 || answer.contains("error")) {
    const std::string message = answer.value("message", answer.value("error", std::string("no message")));
    throw Error(
        fmt::format("etcd at {} refused {}: {}", endpoint_, path, message),
        tokenExpired(answer) || message.find("permission denied") != std::string::npos ||
                message.find("authentication") != std::string::npos
            ? fmt::format("check the user and password in {} and {}", env::kEtcdUser.name(), env::kEtcdPassword.name())
            : "");
  }
  return answer;
}

long long EtcdClient::grantLease(long long ttl_seconds) {
  const json answer = call("/v3/lease/grant", {{"TTL", std::to_string(ttl_seconds)}});
  const long long id = number(answer, "ID");
  if (id == 0) throw Error(fmt::format("etcd at {} granted no lease", endpoint_));
  return id;
}

long long EtcdClient::keepAlive(long long lease) {
  return number(call("/v3/lease/keepalive", {{"ID", std::to_string(lease)}}, true), "TTL");
}

void EtcdClient::revoke(long long lease) { call("/v3/lease/revoke", {{"ID", std::to_string(lease)}}); }

std::optional<KeyValue> EtcdClient::get(const std::string& key) {
  const json answer = call("/v3/kv/range", {{"key", base64Encode(key)}});
  auto kvs = answer.find("kvs");
  if (kvs == answer.end() || !kvs->is_array() || kvs->empty()) return std::nullopt;
  return keyValueOf(kvs->front());
}

std::vector<KeyValue> EtcdClient::list(const std::string& prefix) {
  const json answer =
      call("/v3/kv/range", {{"key", base64Encode(prefix)}, {"range_end", base64Encode(prefixEnd(prefix))}});
  std::vector<KeyValue> out;
  if (auto kvs = answer.find("kvs"); kvs != answer.end() && kvs->is_array()) {
    for (const auto& kv : *kvs) out.push_back(keyValueOf(kv));
  }
  return out;
}

void EtcdClient::put(const std::string& key, const std::string& value, long long lease) {
  json body = {{"key", base64Encode(key)}, {"value", base64Encode(value)}};
  if (lease) body["lease"] = std::to_string(lease);
  call("/v3/kv/put", body);
}

bool EtcdClient::create(const std::string& key, const std::string& value, long long lease,
                        std::optional<KeyValue>& existing) {
  json put = {{"key", base64Encode(key)}, {"value", base64Encode(value)}};
  if (lease) put["lease"] = std::to_string(lease);
  const json body = {
      {"compare",
       json::array(
           {{{"key", base64Encode(key)}, {"target", "CREATE"}, {"result", "EQUAL"}, {"create_revision", "0"}}})},
      {"success", json::array({{{"request_put", put}}})},
      {"failure", json::array({{{"request_range", {{"key", base64Encode(key)}}}}})}};
  const json answer = call("/v3/kv/txn", body);
  if (answer.value("succeeded", false)) return true;
  existing.reset();
  for (const auto& r : answer.value("responses", json::array())) {
    const json range = r.value("response_range", json::object());
    if (auto kvs = range.find("kvs"); kvs != range.end() && kvs->is_array() && !kvs->empty())
      existing = keyValueOf(kvs->front());
  }
  return false;
}

void EtcdClient::remove(const std::string& key) { call("/v3/kv/deleterange", {{"key", base64Encode(key)}}); }

}  // namespace accel::launch::etcd
