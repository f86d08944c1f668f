// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/join_rules.h"

#include <vector>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/launch/plan/plan_layout.h"

namespace accel::launch::job {

std::optional<JoinRefusal> refuseJoin(const plan::LaunchPlan& plan, const job::Join& join, const std::string& address,
                                      const FindJoined& joined, bool started) {
  const int k = join.machine;
  const std::string who = fmt::format("machine {} ({}, {})", k, join.host, address);
  const std::string same_command = "run the same accel launch command on every machine; only --machine_rank differs";
  const std::string own_rank = fmt::format("give each machine its own --machine_rank, 0 to {}", plan.max_machines - 1);
  const long long world = plan.world_at_join ? 0 : plan.world_size;
  auto machines = [](int min, int max) { return min == max ? std::to_string(max) : fmt::format("{}:{}", min, max); };
  if (join.machines != plan.max_machines || join.min_machines != plan.min_machines ||
      (join.world && world && join.world != world)) {
    return JoinRefusal{
        fmt::format("{} has --num_machines {} and --num_processes {}, machine 0 ({}) has {} and {}", who,
                    machines(join.min_machines, join.machines), join.world ? std::to_string(join.world) : "unset",
                    plan.host, machines(plan.min_machines, plan.max_machines), world ? std::to_string(world) : "unset"),
        same_command};
  }
  if (started) return JoinRefusal{fmt::format("{} tried to join after the job started", who), same_command};
  if (k < 0) {
    return JoinRefusal{fmt::format("{} asked for a machine rank, but all {} are taken", who, plan.max_machines),
                       fmt::format("the job has {} machines (--nnodes): start that many", plan.max_machines)};
  }
  if (k == 0)
    return JoinRefusal{fmt::format("{} and this launcher ({}) both have machine_rank 0", who, plan.host), own_rank};
  if (k >= plan.max_machines) {
    return JoinRefusal{fmt::format("{} has machine_rank {}, but the job has {} machines", who, k, plan.max_machines),
                       own_rank};
  }
  if (const Joined* first = joined(k)) {
    return JoinRefusal{fmt::format("machine_rank {} is claimed twice: by {} ({}, pid {}) and by {} ({}, pid {})", k,
                                   first->host, first->address, first->pid, join.host, address, join.pid),
                       own_rank};
  }
  return std::nullopt;
}

int freeMachine(const plan::LaunchPlan& plan, const FindJoined& joined) {
  for (int k = 1; k < plan.max_machines; ++k) {
    if (!joined(k)) return k;
  }
  return -1;
}

Settled settleLayout(const plan::LaunchPlan& plan, const FindJoined& joined) {
  Settled out;
  out.layout.push_back({static_cast<int>(plan.workers.size()), plan.role});
  std::vector<std::string> counts = {fmt::format("machine 0 ({}) {}", plan.host, plan.workers.size())};
  std::vector<std::pair<std::string, long long>> totals;
  if (!plan.world_at_join) totals.emplace_back(fmt::format("machine 0 ({})", plan.host), plan.world_size);
  for (int k = 1; k < plan.num_machines; ++k) {
    const Joined* j = joined(k);
    out.layout.push_back(j->share);
    counts.push_back(fmt::format("machine {} ({}) {}", k, j->host, j->share.procs));
    if (j->world) totals.emplace_back(fmt::format("machine {} ({})", k, j->host), j->world);
  }
  const long long world = plan::worldOf(out.layout);
  for (const auto& [who, total] : totals) {
    if (total == world) continue;
    out.refusal = JoinRefusal{fmt::format("{} was given --num_processes {}, but the machines' workers add up to {}: {}",
                                          who, total, world, join(counts, ", ")),
                              "give every machine the same total, or only --nproc_per_node (each machine's own count)"};
    break;
  }
  return out;
}

std::string missingMachines(const plan::LaunchPlan& plan, const FindJoined& joined) {
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

}  // namespace accel::launch::job
