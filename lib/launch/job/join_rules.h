// SPDX-License-Identifier: Apache-2.0
// Who may join a job (job_hub.h), decided from the join alone: the same job shape (machines, and
// the total where both were given one) and a machine rank that is free, before the start; and,
// once all joined, the layout (each machine's workers, which may differ). Two launchers with the same
// rank or a different shape mean the command lines disagree and no machine can train: the hub
// then ends the whole job. Pure.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lib/launch/job/job_messages.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::job {

// What machine 0 knows of a machine that joined.
struct Joined {
  std::string host, address;
  int pid = 0;
  plan::MachineShare share;  // its workers and role
  long long world = 0;       // the total it was given, 0 for none
};
using FindJoined = std::function<const Joined*(int machine)>;

struct JoinRefusal {
  std::string problem, hint;
};

// Why the launcher at `address` that sent `join` may not join `plan`'s job now, or nullopt.
// `join.machine` is its rank, as given out when it asked for one (-1).
std::optional<JoinRefusal> refuseJoin(const plan::LaunchPlan& plan, const job::Join& join, const std::string& address,
                                      const FindJoined& joined, bool started);

// The rank for a launcher that asks for one: the lowest free, or -1 when every rank is taken.
int freeMachine(const plan::LaunchPlan& plan, const FindJoined& joined);

// Once every machine joined: the job's layout, machine 0 (this launcher) first; or a refusal
// when a total some machine was given is not what the machines' workers add up to.
struct Settled {
  std::vector<plan::MachineShare> layout;
  std::optional<JoinRefusal> refusal;
};
Settled settleLayout(const plan::LaunchPlan& plan, const FindJoined& joined);

// "machines 1, 2 of 3 did not join within 600 s (joined: …); check that …".
std::string missingMachines(const plan::LaunchPlan& plan, const FindJoined& joined);

}  // namespace accel::launch::job
