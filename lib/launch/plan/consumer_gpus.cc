// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/consumer_gpus.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::plan {

namespace {

constexpr const char* kFixedDriver = "550.40.07";  // Accelerate's acceptable_driver_version

std::optional<std::vector<long long>> numbers(const std::string& version) {
  std::vector<long long> out;
  for (const auto& part : split(version, '.')) {
    auto n = parseInt(part);
    if (!n || *n < 0) return std::nullopt;
    out.push_back(*n);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool affected(const facts::Machine& f) {
  const bool rtx40 = std::any_of(f.gpus.begin(), f.gpus.end(),
                                 [](const facts::Gpu& g) { return g.name.find("RTX 40") != std::string::npos; });
  return f.physical_gpus > 1 && rtx40 && driverOlder(f.driver_version, kFixedDriver);
}

}  // namespace

bool driverOlder(const std::string& version, const std::string& than) {
  auto a = numbers(version), b = numbers(than);
  if (!a || !b) return false;
  return std::lexicographical_compare(a->begin(), a->end(), b->begin(), b->end());
}

void consumerGpuWorkaround(const settings::LaunchSettings& s, const facts::Machine& f, Env& exports,
                           std::vector<std::string>& notes) {
  // Accelerate's multi-GPU and DeepSpeed launchers only: not its simple one, not torchrun's grammar.
  if (s.torchrun.grammar.value || s.paradigm.use_cpu.value || !s.paradigm.gpus() || !affected(f)) return;
  std::vector<std::string> set, kept;
  for (const char* name : {launch_env::kNcclP2pDisable, launch_env::kNcclIbDisable}) {
    if (f.env.count(name)) {
      kept.push_back(fmt::format("{}={}", name, f.env.at(name)));
    } else {
      exports.emplace_back(name, "1");
      set.push_back(std::string(name) + "=1");
    }
  }
  if (set.empty()) return;  // Accelerate warns only when it set one
  notes.push_back(fmt::format(
      "RTX 40-series GPUs with driver {} (older than {}): {} set, as Accelerate's launcher sets them (NCCL's "
      "peer-to-peer path hangs on these cards){}",
      f.driver_version, kFixedDriver, join(set, " and "), kept.empty() ? "" : "; yours kept: " + join(kept, ", ")));
}

}  // namespace accel::launch::plan
