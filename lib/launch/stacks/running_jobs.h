// SPDX-License-Identifier: Apache-2.0
// The accel jobs running on this machine, found in /proc as far as this user may read it: a
// worker is a process whose environment has ACCEL_RUN_ID and RANK and whose parent's has not that
// run id (the launcher; the worker's own children inherit both and are not ranks).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace accel::launch::stacks {

struct RunningRank {
  int rank = 0;
  pid_t pid = 0;
};

struct RunningJob {
  std::string run_id;
  pid_t launcher = 0;
  std::vector<RunningRank> ranks;  // by rank
  std::string socket;              // where its launcher answers (launch_env.h kLauncherSocket), or ""
};

std::vector<RunningJob> findRunningJobs();

// The job `selector` names (a launcher's pid or a run id), or with "" the only one running.
// Throws UsageError naming what was looked for: no job, several and no selection (listing them),
// a pid that is no launcher of a job (saying what it runs), an unknown run id.
RunningJob selectJob(const std::vector<RunningJob>& jobs, const std::string& selector);

}  // namespace accel::launch::stacks
