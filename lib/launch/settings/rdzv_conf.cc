// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/rdzv_conf.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel::launch::settings {

namespace {

struct Reader {
  const std::string& where;

  [[noreturn]] void wrongType(const std::string& key, const std::string& value, const char* what) const {
    throw UsageError(fmt::format("{} {}={}: '{}' is not {}", where, key, value, value, what),
                     fmt::format("e.g. {} {}=60", where, key));
  }
  // A whole number of seconds above 0, as torchrun's get_as_int reads the timeouts.
  double seconds(const std::string& key, const std::string& value) const {
    auto v = parseInt(value);
    if (!v || *v <= 0) wrongType(key, value, "a whole number of seconds above 0");
    return static_cast<double>(*v);
  }
  long long count(const std::string& key, const std::string& value) const {
    auto v = parseInt(value);
    if (!v || *v <= 0) wrongType(key, value, "a whole number above 0");
    return *v;
  }
  // torchrun's get_as_bool: 1/true/t/yes/y or 0/false/f/no/n, any case.
  bool truth(const std::string& key, const std::string& value) const {
    const std::string v = toLower(value);
    if (v == "1" || v == "true" || v == "t" || v == "yes" || v == "y") return true;
    if (v == "0" || v == "false" || v == "f" || v == "no" || v == "n") return false;
    throw UsageError(fmt::format("{} {}={}: '{}' is not a boolean", where, key, value, value),
                     fmt::format("give {}=true or {}=false", key, key));
  }
};

}  // namespace

namespace {

// The etcd backends' keys: true where `key` is one (and `c` has it).
bool readEtcdKey(RdzvConf& c, const Reader& r, const std::string& key, const std::string& value) {
  if (key == "protocol") {
    const std::string v = toLower(value);
    if (v != "http" && v != "https") {
      throw UsageError(fmt::format("{} protocol={}: '{}' is not http or https", r.where, value, value),
                       "give protocol=https for an etcd served over TLS, else leave it out");
    }
    c.https = v == "https";
  } else if (key == "ca_cert" || key == "cacert") {
    c.ca_cert = value;
  } else if (key == "ssl_cert" || key == "cert") {
    c.ssl_cert = value;
  } else if (key == "ssl_cert_key" || key == "key") {
    c.ssl_cert_key = value;
  } else if (key == "etcd_prefix") {
    if (value.front() != '/') {
      throw UsageError(fmt::format("{} etcd_prefix={}: a prefix starts with '/'", r.where, value),
                       "e.g. etcd_prefix=/accel/rdzv");
    }
    c.etcd_prefix = value;
  } else if (key == "read_timeout") {
    c.read_timeout = r.seconds(key, value);
  } else {
    return false;
  }
  return true;
}

}  // namespace

RdzvConf parseRdzvConf(const std::string& text, const std::string& where, bool etcd) {
  RdzvConf c;
  const Reader r{where};
  if (trim(text).empty()) return c;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    const std::string key = trim(item.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    if (key.empty() || value.empty()) {
      throw UsageError(fmt::format("{} '{}': '{}' is not KEY=VALUE", where, text, item),
                       fmt::format("give KEY=VALUE pairs separated by commas, e.g. {} join_timeout=900,"
                                   "last_call_timeout=10",
                                   where));
    }
    if (key == "join_timeout") {
      c.join_timeout = r.seconds(key, value);
    } else if (key == "last_call_timeout") {
      c.last_call_timeout = r.seconds(key, value);
    } else if (key == "keep_alive_interval") {
      c.keep_alive_interval = r.count(key, value);
    } else if (key == "keep_alive_max_attempt") {
      c.keep_alive_max_attempt = r.count(key, value);
    } else if (key == "is_host") {
      c.is_host = r.truth(key, value);
    } else if (etcd && readEtcdKey(c, r, key, value)) {
      continue;
    } else {
      // close_timeout and heartbeat_timeout bound torchrun's own store operations, read_timeout,
      // timeout and store_type choose its store: accel's channel has its own (--heartbeat_timeout).
      if (key == "read_timeout" || key == "timeout" || key == "close_timeout" || key == "heartbeat_timeout") {
        r.seconds(key, value);  // torchrun refuses these when they are not integers
      }
      c.unused.push_back(key);
    }
  }
  return c;
}

}  // namespace accel::launch::settings
