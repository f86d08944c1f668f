// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/join_rules.h"

#include <vector>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

std::optional<JoinRefusal> refuseJoin(const LaunchPlan& plan, const job::Join& join, const std::string& address,
                                      const FindJoined& joined, bool started) {
  const int k = join.machine;
  const std::string who = fmt::format("machine {} ({}, {})", k, join.host, address);
  const std::string same_command = "run the same accel launch command on every machine; only --machine_rank differs";
  const std::string own_rank = fmt::format("give each machine its own --machine_rank, 0 to {}", plan.num_machines - 1);
  if (started) return JoinRefusal{fmt::format("{} tried to join after the job started", who), same_command};
  if (join.machines != plan.num_machines || join.world != plan.world_size) {
    return JoinRefusal{fmt::format("{} has --num_machines {} and --num_processes {}, machine 0 ({}) has {} and {}", who,
                                   join.machines, join.world, plan.host, plan.num_machines, plan.world_size),
                       same_command};
  }
  if (k == 0)
    return JoinRefusal{fmt::format("{} and this launcher ({}) both have machine_rank 0", who, plan.host), own_rank};
  if (k >= plan.num_machines) {
    return JoinRefusal{fmt::format("{} has machine_rank {}, but the job has {} machines", who, k, plan.num_machines),
                       own_rank};
  }
  if (const Joined* first = joined(k)) {
    return JoinRefusal{fmt::format("machine_rank {} is claimed twice: by {} ({}, pid {}) and by {} ({}, pid {})", k,
                                   first->host, first->address, first->pid, join.host, address, join.pid),
                       own_rank};
  }
  return std::nullopt;
}

std::string missingMachines(const LaunchPlan& plan, const FindJoined& joined) {
  std::vector<std::string> missing, here;
  for (int k = 1; k < plan.num_machines; ++k) {
    if (const Joined* j = joined(k)) {
      here.push_back(fmt::format("{} on {} ({})", k, j->host, j->address));
    } else {
      missing.push_back(std::to_string(k));
    }
  }
  return fmt::format(
      "machine{} {} of {} did not join within {:g} s (joined: machine 0 on {}{}{}); check that "
      "`accel launch` runs there with --num_machines {} --main_process_ip {} --main_process_port {}",
      missing.size() > 1 ? "s" : "", join(missing, ", "), plan.num_machines, plan.join_timeout, plan.host,
      here.empty() ? "" : ", machine ", join(here, ", machine "), plan.num_machines, plan.master_addr,
      plan.main_process_port);
}

}  // namespace accel
