// SPDX-License-Identifier: Apache-2.0
// Which ranks each machine runs (LaunchPlan::layout): contiguous ranges in machine order, as
// torchrun assigns them, whatever each machine's count. Pure arithmetic over the layout.
#pragma once

#include <vector>

#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::plan {

// The layout as far as this machine knows it before the join: every machine's share of a given
// total (the first total % machines machines run one more); or, when machine 0 settles it at the
// join, this machine's count for every machine.
std::vector<MachineShare> initialLayout(const settings::LaunchSettings& s);

int worldOf(const std::vector<MachineShare>& layout);
int firstRankOf(const std::vector<MachineShare>& layout, int machine);

// Where `machine`'s ranks stand among the machines of its role: the first one's role rank, and
// the role's world size.
struct RoleShare {
  int first = 0, size = 0;
};
RoleShare roleShareOf(const std::vector<MachineShare>& layout, int machine);

}  // namespace accel::launch::plan
