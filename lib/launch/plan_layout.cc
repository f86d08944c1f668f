// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan_layout.h"

#include <algorithm>
#include <numeric>

#include "lib/launch/launch_env.h"

namespace accel {

namespace {

void setVariable(WorkerSpec& w, const char* name, int value) {
  for (auto& [k, v] : w.env) {
    if (k == name) v = std::to_string(value);
  }
}

}  // namespace

long long shareOfTotal(long long total, long long machines, long long machine) {
  return total / machines + (machine < total % machines ? 1 : 0);
}

std::vector<MachineShare> initialLayout(const LaunchSettings& s) {
  const long long machines = std::max(1LL, s.integer("num_machines"));
  std::vector<MachineShare> layout;
  for (long long k = 0; k < machines; ++k) {
    const long long procs =
        s.flag("world_at_join") ? s.integer("nproc_per_node") : shareOfTotal(s.integer("num_processes"), machines, k);
    layout.push_back({static_cast<int>(procs), s.text("role")});
  }
  return layout;
}

int worldOf(const std::vector<MachineShare>& layout) {
  return std::accumulate(layout.begin(), layout.end(), 0, [](int sum, const MachineShare& m) { return sum + m.procs; });
}

int firstRankOf(const std::vector<MachineShare>& layout, int machine) {
  return worldOf({layout.begin(), layout.begin() + std::clamp(machine, 0, static_cast<int>(layout.size()))});
}

int machineOfRank(const LaunchPlan& plan, int rank) {
  int first = 0;
  for (size_t k = 0; k < plan.layout.size(); ++k) {
    first += plan.layout[k].procs;
    if (rank < first) return static_cast<int>(k);
  }
  return -1;
}

void setLayout(LaunchPlan& plan, int machine_rank, const std::vector<MachineShare>& layout) {
  plan.machine_rank = machine_rank;
  plan.layout = layout;
  plan.world_size = worldOf(layout);
  const std::string& role = layout[static_cast<size_t>(machine_rank)].role;
  int role_first = 0, role_size = 0;
  for (size_t k = 0; k < layout.size(); ++k) {
    if (layout[k].role != role) continue;
    if (static_cast<int>(k) < machine_rank) role_first += layout[k].procs;
    role_size += layout[k].procs;
  }
  const int first = firstRankOf(layout, machine_rank);
  for (size_t local = 0; local < plan.workers.size(); ++local) {
    WorkerSpec& w = plan.workers[local];
    w.rank = first + static_cast<int>(local);
    setVariable(w, launch_env::kRank, w.rank);
    setVariable(w, launch_env::kRoleRank, role_first + static_cast<int>(local));
    setVariable(w, launch_env::kWorldSize, plan.world_size);
    setVariable(w, launch_env::kRoleWorldSize, role_size);
    setVariable(w, launch_env::kGroupRank, machine_rank);
  }
  const long long input = plan.settings.integer("stdin_rank");
  plan.stdin_rank =
      input >= 0 && machineOfRank(plan, static_cast<int>(input)) == machine_rank ? static_cast<int>(input) : -1;
}

}  // namespace accel
