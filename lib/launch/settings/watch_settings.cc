// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/watch_settings.h"

#include <fcntl.h>

#include <cmath>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"

namespace accel::launch::settings {

int eventLogDescriptor(const std::string& target, const std::string& where) {
  if (target.rfind("fd:", 0) != 0) return -1;
  const auto n = parseInt(target.substr(3));
  if (!n || *n < 0 || *n > 1023) {
    throw UsageError(fmt::format("{} '{}': fd: is followed by a descriptor number (0 to 1023)", where, target),
                     "e.g. --event_log fd:3 with `3>events.jsonl` in the shell, or a file name");
  }
  if (::fcntl(static_cast<int>(*n), F_GETFD) < 0) {
    throw UsageError(fmt::format("{} '{}': descriptor {} is not open in the launcher", where, target, *n),
                     fmt::format("open it where accel starts, e.g. `{}>events.jsonl`", *n));
  }
  return static_cast<int>(*n);
}

Watching resolveWatching(const LaunchOptions& o, const facts::Machine& f) {
  Watching w;
  if (o.event_log) {
    w.event_log = {*o.event_log, fromCommandLine()};
  } else if (env::kEventLog.setIn(f.env) && !env::kEventLog.in(f.env).empty()) {
    w.event_log = {env::kEventLog.in(f.env), fromEnvironment()};
  } else {
    w.event_log = {std::nullopt, fromDefault()};
  }
  if (w.event_log.value) {
    if (w.event_log.value->empty()) throw UsageError("--event_log is given no file", "e.g. --event_log events.jsonl");
    eventLogDescriptor(*w.event_log.value, w.event_log.origin.source == Source::Environment
                                               ? std::string(env::kEventLog.name())
                                               : std::string("--event_log"));
  }
  // torchrun's handlers: "null" and "dynamic_rendezvous" log nowhere, "console" to stderr.
  if (o.event_log_handler && *o.event_log_handler != "null" && *o.event_log_handler != "console" &&
      *o.event_log_handler != "dynamic_rendezvous") {
    throw UsageError(fmt::format("--event-log-handler '{}' is not one of torchrun's handlers (null, console, "
                                 "dynamic_rendezvous)",
                                 *o.event_log_handler),
                     "console prints the events on stderr; --event_log FILE writes accel's to a file");
  }
  const bool console = o.event_log_handler && *o.event_log_handler == "console";
  w.console_events = {console, o.event_log_handler ? fromCommandLine() : fromDefault()};
  if (o.metrics_port) {
    w.metrics_port = {static_cast<int>(*o.metrics_port), fromCommandLine()};
  } else if (env::kMetricsPort.setIn(f.env)) {
    w.metrics_port = {env::kMetricsPort.in(f.env), fromEnvironment()};
  } else {
    w.metrics_port = {0, fromDefault()};
  }
  w.metrics_addr = o.metrics_addr ? Setting<std::optional<std::string>>{*o.metrics_addr, fromCommandLine()}
                                  : Setting<std::optional<std::string>>{std::nullopt, fromDefault()};
  w.metrics_linger = {o.metrics_linger.value_or(0), o.metrics_linger ? fromCommandLine() : fromDefault()};
  if (!(w.metrics_linger.value >= 0) || w.metrics_linger.value > 86400) {
    throw UsageError(fmt::format("--metrics_linger {:g} is not a number of seconds (0 to 86400)", *o.metrics_linger),
                     "e.g. --metrics_linger 60");
  }
  if ((o.metrics_addr || o.metrics_linger) && w.metrics_port.value == 0) {
    throw UsageError(fmt::format("--{} applies to /metrics, and no --metrics_port serves it",
                                 o.metrics_addr ? "metrics_addr" : "metrics_linger"),
                     "add --metrics_port PORT (or set ACCEL_METRICS_PORT), or drop the flag");
  }
  return w;
}

}  // namespace accel::launch::settings
