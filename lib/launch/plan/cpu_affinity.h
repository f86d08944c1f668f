// SPDX-License-Identifier: Apache-2.0
// enable_cpu_affinity: each local worker is pinned to its own share of the CPUs the launcher may
// use, so one worker's compute never preempts another's communication threads. Accelerate's
// wizard asks for this key and its launcher ignores it; accel honours it for CPU and GPU workers.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace accel::launch::plan {

// Splits `cpus` into `workers` contiguous, near-equal shares (the first `cpus % workers` get one
// more). With more workers than CPUs, worker i gets CPU i mod |cpus| alone (shared by several).
std::vector<std::vector<int>> splitCpus(const std::vector<int>& cpus, int workers);

}  // namespace accel::launch::plan
