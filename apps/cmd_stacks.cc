// SPDX-License-Identifier: Apache-2.0
// `accel stacks [JOB]`: every rank's current stack on this machine, for the job named by its
// launcher's pid or run id, or the only one running (lib/launch/stacks/). Each stack in full, then
// one summary line per rank. Exit 0 when every rank's stack was read, 1 when some could not be
// (each says why and what to install), 2 when no job, or no single job, was named.
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/environment.h"
#include "lib/launch/stacks/collect_stacks.h"

namespace accel {

int runStacks(const std::string& job_selector, double timeout_seconds) {
  const RunningJob job = selectJob(findRunningJobs(), job_selector);
  const auto limit = std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RankStack> stacks = collectStacks(job.ranks, processEnvironment(), limit);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("accel stacks: run {}, launcher pid {}, {} rank(s) on this machine, read in {:.2f} s\n",
                           job.run_id, job.launcher, stacks.size(), took)
            << stacksText(stacks) << "summary:\n";
  bool all = true;
  for (const std::string& line : stackSummaryLines(stacks)) std::cout << "  " << line << "\n";
  for (const RankStack& s : stacks) all = all && s.problem.empty();
  std::cout.flush();
  return all ? 0 : 1;
}

}  // namespace accel
