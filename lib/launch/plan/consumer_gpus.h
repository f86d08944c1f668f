// SPDX-License-Identifier: Apache-2.0
// Accelerate's workaround for consumer GPUs whose peer-to-peer path hangs NCCL: its launcher
// (multi-GPU and DeepSpeed, commands/launch.py) asks check_cuda_p2p_ib_support, which says no
// when the machine has more than one GPU, one of them is named "RTX 40…", and the driver is older
// than 550.40.07; it then sets NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1 where the user has not
// set them, and warns. accel does the same for the same launches, in one line.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

// Whether `version` ("535.104.05") is older than `than`, component by component as numbers;
// false when either is not dotted numbers.
bool driverOlder(const std::string& version, const std::string& than);

// Appends the two variables to `exports` (those the user has not set) and says so in `notes`.
void consumerGpuWorkaround(const settings::LaunchSettings& s, const facts::Machine& f, Env& exports,
                           std::vector<std::string>& notes);

}  // namespace accel::launch::plan
