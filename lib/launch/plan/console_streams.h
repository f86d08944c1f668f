// SPDX-License-Identifier: Apache-2.0
// Which of each worker's streams reach the console (LaunchPlan::console_streams, torchrun's Std
// encoding: 1 stdout, 2 stderr, 3 both, 0 none; "N" or "LOCAL_RANK:N,…"), and which local ranks
// (--local_ranks_filter):
//   - `accel launch`: --tee names the streams shown (default 3), less those -r/--redirects keeps
//     in the log files;
//   - `accel torchrun`: as torchrun, every stream -r/--redirects does not keep in the files, and
//     every stream --tee names (it writes them to the files too).
// Throws UsageError naming the flag or its PET_ variable.
#pragma once

#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::plan {

void setConsoleStreams(LaunchPlan& p, const settings::LaunchSettings& s);

}  // namespace accel::launch::plan
