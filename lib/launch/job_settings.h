// SPDX-License-Identifier: Apache-2.0
// The job channel's settings and the workers' collective timeout, part of resolveLaunchSettings
// (launch_settings.h): flag > ACCEL_* variable > default, and torchrun's --rdzv_conf join_timeout.
#pragma once

#include "lib/launch/launch_settings.h"

namespace accel {

// The job channel between the machines' launchers (job/job_link.h): job_port, heartbeat_timeout
// and join_timeout, and the workers' collective_timeout, from flags, ACCEL_* variables and
// --rdzv_conf. Throws UsageError naming the flag or variable.
void resolveJobChannel(LaunchSettings& s, const LaunchOptions& o, const LaunchFacts& facts);

}  // namespace accel
