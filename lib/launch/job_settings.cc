// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job_settings.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/launch_settings.h"

namespace accel {

namespace {

// A positive number of seconds, or UsageError naming where it came from and what it said.
double seconds(const std::string& text, const std::string& where) {
  const auto v = parsePositiveSeconds(text);
  if (!v) throw UsageError(fmt::format("{}: '{}' is not a number of seconds above 0", where, text), "e.g. 30 or 2.5");
  return *v;
}

// Seconds, 0 meaning off, or UsageError naming where it came from.
double secondsOrOff(const std::string& text, const std::string& where) {
  const auto v = parseDouble(text);
  if (!v || !std::isfinite(*v) || *v < 0) {
    throw UsageError(fmt::format("{}: '{}' is not a number of seconds (0 for off)", where, text), "e.g. 300 or 0");
  }
  return *v;
}

// A setting in seconds from its flag, else its ACCEL_* variable, else `fallback`; 0 is off.
void setSecondsOrOff(LaunchSettings& s, const char* key, std::optional<double> flag, const std::string& env_value,
                     const char* env_name, double fallback) {
  if (flag) {
    s.set(key, secondsOrOff(fmt::format("{}", *flag), std::string("--") + key), "command line");
  } else if (!env_value.empty()) {
    s.set(key, secondsOrOff(env_value, env_name), "environment");
  } else {
    s.set(key, fallback, "default");
  }
}

// A TCP port, or UsageError saying what was given ("--job_port 0", "ACCEL_JOB_PORT='x'").
long long port(std::optional<long long> v, const std::string& given) {
  if (!v || *v < 1 || *v > 65535) throw UsageError(fmt::format("{} is not a port (1-65535)", given));
  return *v;
}

// torchrun's "join_timeout=900,read_timeout=60": join_timeout applies, the rest is noted.
void readRdzvConf(LaunchSettings& s, const std::string& conf) {
  for (const auto& item : split(conf, ',')) {
    if (trim(item).empty()) continue;
    auto eq = item.find('=');
    const std::string key = trim(item.substr(0, eq));
    if (eq == std::string::npos) {
      throw UsageError(fmt::format("--rdzv_conf: '{}' is not KEY=VALUE", item), "e.g. --rdzv_conf join_timeout=900");
    }
    if (key == "join_timeout") {
      s.set("join_timeout", seconds(item.substr(eq + 1), "--rdzv_conf join_timeout"), "command line");
    } else {
      s.notes.push_back(
          fmt::format("--rdzv_conf {} ignored: accel's rendezvous is static (rank 0's store at "
                      "main_process_ip:main_process_port); join_timeout is the key it reads",
                      key));
    }
  }
}

}  // namespace

void resolveJobChannel(LaunchSettings& s, const LaunchOptions& o, const LaunchFacts& f) {
  auto env = [&](const char* name) -> std::string {
    auto it = f.env.find(name);
    return it == f.env.end() ? "" : it->second;
  };
  if (o.job_port) {
    s.set("job_port", port(*o.job_port, fmt::format("--job_port {}", *o.job_port)), "command line");
  } else if (const std::string v = env(launch_env::kJobPort); !v.empty()) {
    s.set("job_port", port(parseInt(v), fmt::format("{}='{}'", launch_env::kJobPort, v)), "environment");
  } else {
    long long base = s.integer("main_process_port");
    s.set("job_port", base > 0 && base < 65535 ? base + 1 : 0, "default");  // 0: picked with the store's port
  }
  if (o.heartbeat_timeout) {
    s.set("heartbeat_timeout", seconds(fmt::format("{}", *o.heartbeat_timeout), "--heartbeat_timeout"), "command line");
  } else if (const std::string v = env(launch_env::kHeartbeatTimeout); !v.empty()) {
    s.set("heartbeat_timeout", seconds(v, launch_env::kHeartbeatTimeout), "environment");
  } else {
    s.set("heartbeat_timeout", defaults::kHeartbeatTimeoutSeconds, "default");
  }
  s.set("join_timeout", defaults::kJoinTimeoutSeconds, "default");
  if (o.rdzv_conf) readRdzvConf(s, *o.rdzv_conf);
  // The workers read ACCEL_COLLECTIVE_TIMEOUT themselves; checked here so a bad value stops the
  // launch (exit 2) instead of every worker.
  if (o.collective_timeout) {
    s.set("collective_timeout", seconds(fmt::format("{}", *o.collective_timeout), "--collective_timeout"),
          "command line");
  } else if (const std::string v = env(launch_env::kCollectiveTimeout); !v.empty()) {
    s.set("collective_timeout", seconds(v, launch_env::kCollectiveTimeout), "environment");
  } else {
    s.set("collective_timeout", defaults::seconds(defaults::kCollectiveTimeout), "default");
  }
  setSecondsOrOff(s, "hang_timeout", o.hang_timeout, env(launch_env::kHangTimeout), launch_env::kHangTimeout, 0);
  setSecondsOrOff(s, "stacks_timeout", std::nullopt, env(launch_env::kStacksTimeout), launch_env::kStacksTimeout,
                  defaults::kStacksTimeoutSeconds);
}

}  // namespace accel
