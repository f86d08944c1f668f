// SPDX-License-Identifier: Apache-2.0
// Python workers' flight recorder (docs/diagnose.md): torch's own, turned on where the user's
// settings leave it (TORCH_FR_BUFFER_SIZE, as many entries as accel's; a TORCH_FR_* or
// TORCH_NCCL_TRACE_BUFFER_SIZE of the user's wins), and accel's hook (flight/torch_hook.py) first
// on the workers' PYTHONPATH, which starts torch's worker server on a socket of the launcher's
// (launch_env.h kFrSocket) so that the launcher reads each rank's record at a stop. Pure.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::plan {

// Whether the workers' program runs under a Python interpreter (its argv[0] is python*).
bool runsPython(const std::vector<std::string>& program);

// With the recorder on and a Python program: the plan's torch_flight, the PYTHONPATH its workers
// would get without the hook, and torch's variables in its exports; on GPUs also torch_nccl, its
// dump on a timeout, and whether accel names the dump's file and pipe. With it off: the workers'
// ACCEL_FR_BUFFER_SIZE is 0.
void planTorchFlight(LaunchPlan& p, const facts::Machine& f, const std::vector<std::string>& program);

}  // namespace accel::launch::plan
