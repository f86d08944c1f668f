// SPDX-License-Identifier: Apache-2.0
// Who may join a job (job_hub.h), decided from the join alone: the same job shape (machines,
// world size) and a machine rank that is free, before the start. Two launchers with the same
// rank or a different shape mean the command lines disagree and no machine can train: the hub
// then ends the whole job. Pure.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lib/launch/job/job_messages.h"
#include "lib/launch/launch_plan.h"

namespace accel {

// What machine 0 knows of a machine that joined.
struct Joined {
  std::string host, address;
  int pid = 0;
};
using FindJoined = std::function<const Joined*(int machine)>;

struct JoinRefusal {
  std::string problem, hint;
};

// Why the launcher at `address` that sent `join` may not join `plan`'s job now, or nullopt.
std::optional<JoinRefusal> refuseJoin(const LaunchPlan& plan, const job::Join& join, const std::string& address,
                                      const FindJoined& joined, bool started);

// "machines 1, 2 of 3 did not join within 600 s (joined: …); check that …".
std::string missingMachines(const LaunchPlan& plan, const FindJoined& joined);

}  // namespace accel
