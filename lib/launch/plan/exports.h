// SPDX-License-Identifier: Apache-2.0
// Every worker's variables that come from the settings rather than from the worker's place in the
// job (worker_env.h adds those): OMP_NUM_THREADS, the collective timeout, torchrun's handled
// signals, and Accelerate's variables (ACCELERATE_USE_CPU, CUDA_VISIBLE_DEVICES from gpu_ids,
// the paradigm's switches and the config schema's `exports` column), so that Accelerate's state
// and plugins in the workers read the configuration they would under its launcher.
#pragma once

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

// `torchrun_shaped`: the workers get torchrun's ranks (RANK, WORLD_SIZE, …), as under
// Accelerate's torchrun path, rather than its simple launcher's form.
Env settingsExports(const settings::LaunchSettings& s, const facts::Machine& f, bool torchrun_shaped);

}  // namespace accel::launch::plan
