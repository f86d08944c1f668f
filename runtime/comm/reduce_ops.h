// SPDX-License-Identifier: Apache-2.0
// Element-wise reduce kernels on CPU memory for every (dtype, op): c[i] = a[i] op b[i]. Half
// types are reduced in float and rounded back, as PyTorch's CPU reductions do. Pure.
#pragma once

#include <cstddef>

#include "runtime/comm/types.h"

namespace accel {

using ReduceFunction = void (*)(void* c, const void* a, const void* b, size_t n);

// The kernel for `op` (Avg uses Sum; see finishAverage); every dtype/op pair has one.
ReduceFunction reduceFunction(DataType dtype, ReduceOp op);

// After a Sum, turns it into the mean over `world` ranks (integers: truncating division).
void finishAverage(Tensor t, int world);

}  // namespace accel
