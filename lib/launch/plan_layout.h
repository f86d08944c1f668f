// SPDX-License-Identifier: Apache-2.0
// Which ranks each machine runs (LaunchPlan::layout): contiguous ranges in machine order, as
// torchrun assigns them, whatever each machine's count. Pure arithmetic over the layout.
#pragma once

#include <vector>

#include "lib/launch/launch_plan.h"

namespace accel {

// This machine's share of `total` processes over `machines`: the first total % machines
// machines run one more.
long long shareOfTotal(long long total, long long machines, long long machine);

// The layout as far as this machine knows it before the join: every machine's share of a given
// total; or, when machine 0 settles it at the join, this machine's count for every machine.
std::vector<MachineShare> initialLayout(const LaunchSettings& s);

int worldOf(const std::vector<MachineShare>& layout);
int firstRankOf(const std::vector<MachineShare>& layout, int machine);

}  // namespace accel
