// SPDX-License-Identifier: Apache-2.0
// `accel config`: Accelerate's "This machine" questionnaire — same questions, order and
// defaults — producing the values of a default_config.yaml.
#pragma once

#include <nlohmann/json.hpp>

#include "lib/config/prompter.h"

namespace accel {

// Asks every question through `prompter` and returns the config values (not yet written).
// The answers are checked as they come (e.g. gpu_ids against the process count), so the result
// always passes checkConsistency; every default offered is one those checks accept (the process
// count's comes from `visible_gpus`, this machine's). Throws Interrupted on Ctrl-C and Error
// when input ends.
nlohmann::json runConfigWizard(Prompter& prompter, int visible_gpus);

}  // namespace accel
