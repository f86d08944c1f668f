// SPDX-License-Identifier: Apache-2.0
// runtime_worker's `nccl-stall S` mode (CUDA builds): rank 0's stream stalls, and a barrier on
// the NCCL group must fail after S s on every rank, naming the rank and the operation.
#pragma once

#include "runtime/state/accelerator.h"

namespace accel::test {

// Prints "error after T s: …" and exits 3 (the aborted communicator is not torn down again), or
// "no error after T s" and exits 0; returns 77 where no CUDA device or no NCCL is there.
int ncclStall(Accelerator& acc, int timeout_s);

}  // namespace accel::test
