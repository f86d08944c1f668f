// SPDX-License-Identifier: Apache-2.0
// How the job is watched while it runs, part of resolveLaunchSettings (launch_settings.h): the
// event log (lib/launch/watch/event_log.h) and Prometheus' /metrics,
// flag > ACCEL_* variable > default.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

// --event_log FILE or fd:N (ACCEL_EVENT_LOG), torchrun's --event-log-handler (null,
// dynamic_rendezvous: nothing more; console: torchrun's lines on stderr), --metrics_port
// (ACCEL_METRICS_PORT), --metrics_addr, --metrics_linger. Throws UsageError naming the flag or
// variable and what it said.
Watching resolveWatching(const LaunchOptions& o, const facts::Machine& facts);

// "fd:N": the descriptor N (0 to 1023 inherited from the caller), or -1 where `target` names a file.
// Throws UsageError for "fd:" followed by anything but such a number.
int eventLogDescriptor(const std::string& target, const std::string& where);

}  // namespace accel::launch::settings
