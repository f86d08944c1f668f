// SPDX-License-Identifier: Apache-2.0
#include "lib/config/parallelism_sizes.h"

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

namespace {

// A size whose change alone makes the product the world: the data-parallel ones first (dp_shard,
// FSDP's own dimension, then dp_replicate), then tp, cp, sp.
std::string suggestion(const std::vector<ParallelismSize>& sizes, long long total, long long world) {
  for (const char* name : {"dp_shard_size", "dp_replicate_size", "tp_size", "cp_size", "sp_size"}) {
    for (const auto& s : sizes) {
      if (s.name != name || s.size < 1) continue;
      const long long others = total / s.size;
      if (others > 0 && world % others == 0) {
        return fmt::format("set {} to {} (--parallelism_config_{})", s.name, world / others, s.name);
      }
    }
  }
  return "change the sizes";
}

}  // namespace

std::vector<ParallelismSize> parallelismSizes(
    const std::function<std::pair<long long, std::string>(const std::string& key)>& read) {
  std::vector<ParallelismSize> sizes;
  for (const char* name : {"dp_replicate_size", "dp_shard_size", "tp_size", "cp_size", "sp_size"}) {
    auto [size, origin] = read(std::string("parallelism_config.parallelism_config_") + name);
    sizes.push_back({name, size, std::move(origin)});
  }
  return sizes;
}

std::optional<Diagnostic> parallelismSizeProblem(const std::vector<ParallelismSize>& sizes,
                                                 const std::string& sp_backend, long long world) {
  long long total = 1;
  long long sp = 1;
  std::vector<std::string> factors;
  for (const auto& s : sizes) {
    total *= s.size;
    if (s.name == "sp_size") sp = s.size;
    factors.push_back(fmt::format("{} {} ({})", s.name, s.size, s.origin));
  }
  if (total == 1) return std::nullopt;                           // dp_replicate becomes the world
  if (sp_backend == "deepspeed" && sp > 1) return std::nullopt;  // DeepSpeed's groups
  if (total == world) return std::nullopt;
  return Diagnostic{
      "",
      fmt::format("the ParallelismConfig sizes multiply to {}, but the world size is {}: {}; every worker would "
                  "fail building its Accelerator (\"total_size ({}) does not match num_processes\", or torch's "
                  "\"Mesh should not be bigger than default world size\")",
                  total, world, join(factors, " × "), total),
      fmt::format("{} so that the product is {}, or launch {} processes", suggestion(sizes, total, world), world,
                  total)};
}

}  // namespace accel
