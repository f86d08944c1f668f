// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/cpu_affinity.h"

#include <algorithm>

namespace accel::launch::plan {

std::vector<std::vector<int>> splitCpus(const std::vector<int>& cpus, int workers) {
  std::vector<std::vector<int>> out(static_cast<size_t>(std::max(workers, 0)));
  if (cpus.empty() || out.empty()) return out;
  const size_t n = cpus.size(), w = out.size();
  if (w > n) {
    for (size_t i = 0; i < w; ++i) out[i] = {cpus[i % n]};
    return out;
  }
  size_t at = 0;
  for (size_t i = 0; i < w; ++i) {
    const size_t share = n / w + (i < n % w ? 1 : 0);
    out[i].assign(cpus.begin() + static_cast<long>(at), cpus.begin() + static_cast<long>(at + share));
    at += share;
  }
  return out;
}

}  // namespace accel::launch::plan
