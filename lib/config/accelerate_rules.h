// SPDX-License-Identifier: Apache-2.0
// What Accelerate 1.15 does with a config after reading its keys (its process_config and its
// config classes' checks), applied by the loader (loader.h) to what it read: the legacy keys
// converted (`fp16: true`, a top-level `dynamo_backend`), distributed_type required, a
// SageMaker config's required keys, and its refusal of a SageMaker config with distributed_type
// NO (its loader adds num_processes, which a SageMaker config cannot have). Pure.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/error.h"
#include "lib/config/config.h"

namespace accel {

// The legacy top-level keys as the file had them (null when absent).
struct LegacyKeys {
  nlohmann::json fp16;
  nlohmann::json dynamo_backend;
  Mark dynamo_mark;
};

struct RuleFindings {
  std::vector<Diagnostic> errors;    // Accelerate refuses the file
  std::vector<Diagnostic> problems;  // Accelerate reads it, no launch can use the value
  std::vector<std::string> notes;
};

RuleFindings applyAccelerateRules(Config& config, const LegacyKeys& legacy);

}  // namespace accel
