// SPDX-License-Identifier: Apache-2.0
// Before a later round starts on a machine whose workers use GPUs: the previous round's
// processes (its workers, and whatever shares their process groups) must be gone from the GPUs,
// their memory freed, or the new round's workers may not fit. NVML lists who holds memory on
// this machine's GPUs (hardware/gpu_processes.h); the launcher waits until none of the last
// round's is listed, checking every 100 ms for plan.gpu_free_timeout at most (0: no check). A
// machine whose NVML cannot answer, or whose NVML PIDs are another namespace's (a container),
// does not wait.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::supervise {

// What to say: "" when nothing of `previous` held GPU memory; a note after a wait that ended in
// time; a warning naming each GPU, process and size where the time ran out (the round starts
// anyway).
std::string awaitGpuRelease(const plan::LaunchPlan& plan, const std::vector<pid_t>& previous, int round);

}  // namespace accel::launch::supervise
