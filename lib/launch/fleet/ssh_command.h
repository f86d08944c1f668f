// SPDX-License-Identifier: Apache-2.0
// How the head reaches each host of its plan (plan/launch_plan.h, Kind::Fleet): the command that
// starts that host's `accel launch --from_head`, and the orders it writes on its stdin
// (head_orders.h).
//
//   - A host that names this machine runs this accel directly, without ssh.
//   - Any other runs through OpenSSH with the hosts' options (settings/host_environment.h):
//     `ssh OPTIONS… HOST COMMAND`.
//   - COMMAND runs this accel's path on the host, else `accel` on the host's PATH, else says
//     neither is there (exit 127); $ACCEL_REMOTE_ACCEL names another path.
//   - The orders carry the host's place, the forwarded environment, the head's working
//     directory, its launch arguments and its config file's text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/fleet/head_orders.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::fleet {

struct FleetMember {
  std::string host;
  int machine_rank = 0;
  bool local = false;             // this machine: no ssh
  std::vector<std::string> argv;  // what the head runs for it
  HeadOrders orders;
};

// One member per host of `plan`, in machine order. Throws UsageError when the config file the
// head read cannot be read again.
std::vector<FleetMember> fleetMembers(const plan::LaunchPlan& plan, const settings::LaunchSettings& s,
                                      const facts::Facts& f);

}  // namespace accel::launch::fleet
