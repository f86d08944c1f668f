// SPDX-License-Identifier: Apache-2.0
// Which collective this process is in, for a debugger to read: `accel stacks` and the launcher's
// hang report (lib/launch/stacks/) print the global `accel_collective_now` beside a native rank's
// stack. The groups' queues (op_queue.h) rewrite it when an operation starts ("in #17 all_reduce
// (f32 x 1000) sum, shm rank 1 of 4") and ends ("after #17 …"), so with several groups it names
// the step that started or ended last, the one a stuck rank waits in. Writers take a lock; a
// debugger that stops the process mid-write reads a torn text at worst. NCCL's collectives, which
// run on CUDA streams, are not noted. Each operation that ends also counts on the launcher's
// progress board where there is one (launch_env.h kProgressFd: --hang_timeout).
#pragma once

#include <string>

extern "C" {
// NUL-terminated; empty before the first collective.
extern char accel_collective_now[256];
}

namespace accel {

void noteCollective(bool running, const std::string& numbered, const std::string& label);

// A checkpoint of `step` was committed: noted on the launcher's progress board, where there is one.
void noteCheckpointSaved(long long step);

}  // namespace accel
