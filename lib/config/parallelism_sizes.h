// SPDX-License-Identifier: Apache-2.0
// Accelerate 1.15's size rule for a ParallelismConfig (ParallelismConfig._validate_accelerator):
// the product dp_replicate × dp_shard × tp × cp × sp must be the world size, except that a
// product of 1 means dp_replicate = the world, and the rule is skipped with sp_backend deepspeed
// and sp_size > 1 (DeepSpeed forms its own groups). Accelerate finds out in every worker, after
// the model has loaded; the launcher knows both numbers before anything starts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/error.h"

namespace accel {

struct ParallelismSize {
  std::string name;    // "dp_replicate_size", …
  long long size = 1;  // as the workers will read it
  std::string origin;  // "command line", "config file, line 7", "default"
};

// The five sizes in the rule's order (dp_replicate, dp_shard, tp, cp, sp), each read by `read`
// from its config key ("parallelism_config.parallelism_config_tp_size"): its value and origin.
std::vector<ParallelismSize> parallelismSizes(
    const std::function<std::pair<long long, std::string>(const std::string& key)>& read);

// The config key of sequence parallelism's backend.
inline constexpr const char* kSpBackendKey = "parallelism_config.parallelism_config_sp_backend";

// The problem Accelerate's workers would raise, with which size to change, or nullopt.
// `sizes`: dp_replicate, dp_shard, tp, cp, sp, in that order.
std::optional<Diagnostic> parallelismSizeProblem(const std::vector<ParallelismSize>& sizes,
                                                 const std::string& sp_backend, long long world_size);

}  // namespace accel
