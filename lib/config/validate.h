// SPDX-License-Identifier: Apache-2.0
// Cross-key checks on a Config whose individual values are already well-typed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/config/config.h"

namespace accel {

// Values that cannot work together (MULTI_GPU with one process on one machine, machine_rank ≥
// num_machines, …). Each diagnostic is placed at one key and names the other.
std::vector<Diagnostic> checkConsistency(const Config& config);

// `accel config validate`'s check of a parallelism_config section against num_processes
// (parallelism_sizes.h); a launch only warns, since a script may build its own ParallelismConfig.
std::vector<Diagnostic> checkParallelismSizes(const Config& config);

// Parses gpu_ids ("all" → empty vector; "0,1" → {0, 1}). nullopt with `problem` set on bad text.
std::optional<std::vector<int>> parseGpuIds(const std::string& text, std::string& problem);

}  // namespace accel
