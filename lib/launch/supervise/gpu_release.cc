// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/gpu_release.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/strings.h"
#include "lib/hardware/gpu_processes.h"

namespace accel::launch::supervise {

namespace {

using Clock = std::chrono::steady_clock;

// Whether NVML's `pid` is a process of the last round: one of its workers, or alive in one of
// their process groups (a worker is its group's leader).
bool ofRound(long pid, const std::vector<pid_t>& previous) {
  const auto in = [&](long p) { return std::find(previous.begin(), previous.end(), p) != previous.end(); };
  if (in(pid)) return true;
  const pid_t group = ::getpgid(static_cast<pid_t>(pid));
  return group > 0 && in(group);
}

std::vector<GpuProcess> held(const plan::LaunchPlan& plan, const std::vector<pid_t>& previous) {
  std::vector<std::string> buses = plan.gpu_bus_ids;
  if (std::find(buses.begin(), buses.end(), "") != buses.end()) buses.clear();  // libcuda's: every GPU
  std::string error;
  auto listed = gpuProcesses(buses, error);
  std::vector<GpuProcess> ours;
  if (!listed) return ours;
  for (const auto& p : *listed) {
    if (ofRound(p.pid, previous)) ours.push_back(p);
  }
  return ours;
}

std::string describe(const std::vector<GpuProcess>& processes) {
  std::vector<std::string> parts;
  for (const auto& p : processes) {
    parts.push_back(fmt::format("GPU {}: pid {} holds {:.1f} GiB", p.gpu, p.pid,
                                static_cast<double>(p.used_bytes) / (1024.0 * 1024 * 1024)));
  }
  return join(parts, ", ");
}

}  // namespace

std::string awaitGpuRelease(const plan::LaunchPlan& plan, const std::vector<pid_t>& previous, int round) {
  if (!plan.gpus || plan.gpu_free_timeout <= 0 || previous.empty()) return "";
  const auto start = Clock::now();
  const auto deadline = start + defaults::fromSeconds(plan.gpu_free_timeout);
  std::vector<GpuProcess> first = held(plan, previous), now = first;
  while (!now.empty() && Clock::now() < deadline) {
    ::poll(nullptr, 0, 100);
    now = held(plan, previous);
  }
  if (first.empty()) return "";
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  if (now.empty()) {
    return fmt::format("waited {:.1f} s for round {}'s processes to free their GPU memory ({})", waited, round - 1,
                       describe(first));
  }
  return fmt::format(
      "warning: round {}'s processes still hold GPU memory after {:g} s (--gpu_free_timeout): {}; starting round {} "
      "anyway",
      round - 1, plan.gpu_free_timeout, describe(now), round);
}

}  // namespace accel::launch::supervise
