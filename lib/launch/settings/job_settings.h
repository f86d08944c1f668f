// SPDX-License-Identifier: Apache-2.0
// The job channel's settings and the workers' collective timeout, part of resolveLaunchSettings
// (launch_settings.h): flag > ACCEL_* variable > default, and torchrun's --rdzv_conf join_timeout.
#pragma once

#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

// The job channel between the machines' launchers (job/job_link.h): job_port (after the main
// port; a free one where etcd elects machine 0), heartbeat_timeout and join_timeout, and the
// workers' collective_timeout, from flags, ACCEL_* variables and the placement's --rdzv_conf;
// notes for what --rdzv_conf says that accel does not read. Throws UsageError naming the flag
// or variable.
JobChannel resolveJobChannel(const Placement& placement, const LaunchOptions& o, const facts::Machine& facts,
                             std::vector<std::string>& notes);

}  // namespace accel::launch::settings
