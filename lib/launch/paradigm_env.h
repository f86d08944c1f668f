// SPDX-License-Identifier: Apache-2.0
// The worker variables that come from settings, written from the schema's `exports` column as
// Accelerate 1.15 writes them, so Accelerate's state and plugins in the workers read the same
// configuration they would under its launcher (paradigm_env.cc names its functions).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/launch/launch_settings.h"

namespace accel {

// Variables for the paradigm (DeepSpeed, FSDP, Megatron-LM) as Accelerate exports them.
std::vector<std::pair<std::string, std::string>> paradigmEnv(const LaunchSettings& s);

}  // namespace accel
