// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/job_settings.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/settings/launch_settings.h"
#include "lib/launch/settings/rdzv_conf.h"

namespace accel::launch::settings {

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

// A setting in seconds from its flag (read by `read_flag`), else its variable's row (read as
// the row reads it: the one parse a variable has), else the row's fallback.
template <class ReadFlag>
Setting<double> secondsFrom(const char* key, std::optional<double> flag, ReadFlag read_flag,
                            const env::Variable<double>& variable, const facts::Machine& f) {
  if (flag) return {read_flag(fmt::format("{}", *flag), std::string("--") + key), fromCommandLine()};
  if (variable.setIn(f.env)) return {variable.in(f.env), fromEnvironment()};
  return {variable.fallback(), fromDefault()};
}

// A TCP port, or UsageError saying what was given ("--job_port 0", "ACCEL_JOB_PORT='x'").
long long port(std::optional<long long> v, const std::string& given) {
  if (!v || *v < 1 || *v > 65535) throw UsageError(fmt::format("{} is not a port (1-65535)", given));
  return *v;
}

// torchrun's rendezvous settings (rdzv_conf.h): the join and last-call times, the keep-alive
// as the heartbeat timeout where no flag or variable set one; notes for the keys not read.
void readRdzvConf(JobChannel& c, const RdzvConf& conf, const Origin& origin, bool etcd,
                  std::vector<std::string>& notes) {
  if (conf.join_timeout) c.join_timeout = {*conf.join_timeout, origin};
  if (conf.last_call_timeout) c.last_call_timeout = {*conf.last_call_timeout, origin};
  if ((conf.keep_alive_interval || conf.keep_alive_max_attempt) &&
      c.heartbeat_timeout.origin.source == Source::Default) {
    const long long seconds = conf.keep_alive_interval.value_or(kTorchrunKeepAliveInterval) *
                              conf.keep_alive_max_attempt.value_or(kTorchrunKeepAliveAttempts);
    c.heartbeat_timeout = {static_cast<double>(seconds),
                           derivedFrom(fmt::format("{} keep_alive_interval × keep_alive_max_attempt", origin.text()))};
  }
  for (const auto& key : conf.unused) {
    notes.push_back(fmt::format(
        "{} {} ignored: accel's launchers keep their own channel (--heartbeat_timeout, "
        "--join_timeout); it reads join_timeout, last_call_timeout, keep_alive_interval, "
        "keep_alive_max_attempt and is_host{}",
        origin.text(), key,
        etcd ? "; with etcd also protocol, ca_cert, ssl_cert, ssl_cert_key, etcd_prefix and read_timeout" : ""));
  }
}

// The straggler watch's rule (flight/straggler_watch.h); the flags' rows bound the window.
void readStragglerRule(JobChannel& c, const LaunchOptions& o, const facts::Machine& f) {
  c.straggler_window = o.straggler_window ? Setting<int>{static_cast<int>(*o.straggler_window), fromCommandLine()}
                                          : Setting<int>{50, fromDefault()};
  c.straggler_share =
      o.straggler_share ? Setting<double>{*o.straggler_share, fromCommandLine()} : Setting<double>{0.8, fromDefault()};
  if (!(c.straggler_share.value > 0 && c.straggler_share.value <= 1)) {
    throw UsageError(fmt::format("--straggler_share {:g} is not a share above 0 and at most 1", *o.straggler_share),
                     "e.g. --straggler_share 0.8: last to 80% of the collectives judged");
  }
  c.straggler_lateness = o.straggler_lateness ? Setting<double>{*o.straggler_lateness, fromCommandLine()}
                                              : Setting<double>{0.02, fromDefault()};
  if (!(c.straggler_lateness.value >= 0) || c.straggler_lateness.value > 1e6) {
    throw UsageError(fmt::format("--straggler_lateness {:g} is not a number of seconds", *o.straggler_lateness),
                     "e.g. --straggler_lateness 0.02: last by 20 ms at least");
  }
  c.clock_skew = env::kTestClockSkew.setIn(f.env) ? Setting<double>{env::kTestClockSkew.in(f.env), fromEnvironment()}
                                                  : Setting<double>{0, fromDefault()};
}

}  // namespace

JobChannel resolveJobChannel(const Placement& placement, const LaunchOptions& o, const facts::Machine& f,
                             std::vector<std::string>& notes) {
  const long long main_port = placement.main_process_port.value;
  JobChannel c;
  if (o.job_port) {
    c.job_port = {static_cast<int>(port(*o.job_port, fmt::format("--job_port {}", *o.job_port))), fromCommandLine()};
  } else if (env::kJobPort.setIn(f.env)) {
    c.job_port = {env::kJobPort.in(f.env), fromEnvironment()};
  } else if (placement.etcd) {
    c.job_port = {0, derivedFrom("a free port on the machine etcd elects: the others read it there")};
  } else {
    // 0: picked with the store's port.
    c.job_port = {main_port > 0 && main_port < 65535 ? static_cast<int>(main_port) + 1 : 0, fromDefault()};
  }
  c.heartbeat_timeout = secondsFrom("heartbeat_timeout", o.heartbeat_timeout, seconds, env::kHeartbeatTimeout, f);
  c.join_timeout = {defaults::kJoinTimeoutSeconds, fromDefault()};
  c.last_call_timeout = {kTorchrunLastCallSeconds, fromDefault()};
  if (placement.rdzv_conf) {
    readRdzvConf(c, *placement.rdzv_conf, placement.rdzv_conf_origin, placement.etcd.has_value(), notes);
  }
  // The workers read ACCEL_COLLECTIVE_TIMEOUT themselves; checked here so a bad value stops the
  // launch (exit 2) instead of every worker.
  c.collective_timeout =
      secondsFrom("collective_timeout", o.collective_timeout, seconds, launch_env::kCollectiveTimeout, f);
  c.hang_timeout = secondsFrom("hang_timeout", o.hang_timeout, secondsOrOff, env::kHangTimeout, f);
  c.stacks_timeout = secondsFrom("stacks_timeout", std::nullopt, secondsOrOff, env::kStacksTimeout, f);
  // Read by the workers too (inherited); checked here so a bad value stops the launch.
  const auto& entries = launch_env::kFlightEntries;
  c.flight_entries = entries.setIn(f.env) ? Setting<int>{entries.in(f.env), fromEnvironment()}
                                          : Setting<int>{entries.fallback(), fromDefault()};
  if (o.flight_recorder && *o.flight_recorder != "on" && *o.flight_recorder != "off") {
    throw UsageError(fmt::format("--flight_recorder '{}' is not on or off", *o.flight_recorder));
  }
  if (o.flight_recorder == "off") c.flight_entries = {0, fromCommandLine()};
  readStragglerRule(c, o, f);
  return c;
}

}  // namespace accel::launch::settings
