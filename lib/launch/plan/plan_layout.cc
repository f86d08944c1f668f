// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/plan_layout.h"

#include <algorithm>
#include <numeric>

namespace accel::launch::plan {

std::vector<MachineShare> initialLayout(const settings::LaunchSettings& s) {
  const settings::Placement& p = s.placement;
  const long long machines = std::max(1LL, p.num_machines.value);
  const long long total = p.num_processes.value;
  std::vector<MachineShare> layout;
  for (long long k = 0; k < machines; ++k) {
    const long long procs =
        p.world_at_join ? p.nproc_per_node.value : total / machines + (k < total % machines ? 1 : 0);
    layout.push_back({static_cast<int>(procs), s.supervision.role.value});
  }
  return layout;
}

int worldOf(const std::vector<MachineShare>& layout) {
  return std::accumulate(layout.begin(), layout.end(), 0, [](int sum, const MachineShare& m) { return sum + m.procs; });
}

int firstRankOf(const std::vector<MachineShare>& layout, int machine) {
  return worldOf({layout.begin(), layout.begin() + std::clamp(machine, 0, static_cast<int>(layout.size()))});
}

RoleShare roleShareOf(const std::vector<MachineShare>& layout, int machine) {
  RoleShare out;
  if (machine < 0 || machine >= static_cast<int>(layout.size())) return out;
  const std::string& role = layout[static_cast<size_t>(machine)].role;
  for (size_t k = 0; k < layout.size(); ++k) {
    if (layout[k].role != role) continue;
    if (static_cast<int>(k) < machine) out.first += layout[k].procs;
    out.size += layout[k].procs;
  }
  return out;
}

int machineOfRank(const LaunchPlan& plan, int rank) {
  int first = 0;
  for (size_t k = 0; k < plan.layout.size(); ++k) {
    first += plan.layout[k].procs;
    if (rank < first) return static_cast<int>(k);
  }
  return -1;
}

}  // namespace accel::launch::plan
