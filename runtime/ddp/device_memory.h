// SPDX-License-Identifier: Apache-2.0
// The CUDA memory work of the gradient buckets, behind one interface so that bucket_storage.cc
// has no CUDA and no #ifdef: device_memory_cuda.cc (the runtime built with nvcc) or
// device_memory_none.cc (built without: allocating throws Error, and nothing else is reachable
// since no device memory can exist). Work is queued on the legacy default stream, where the
// trainer's kernels write the gradients. Errors throw accel::Error subclasses naming the call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace accel::device_memory {

// `bytes` (at least one) of zeroed memory on CUDA device `device`.
void* allocateZeroed(size_t bytes, int device);
void release(void* p) noexcept;
void copy(void* to, const void* from, size_t bytes);
void clear(void* to, size_t bytes);
void scale(float* v, size_t n, float factor);
void scaleHalf(uint16_t* v, size_t n, float factor, bool bf16);
void toHalf(const float* from, uint16_t* to, size_t n, bool bf16);
void fromHalf(const uint16_t* from, float* to, size_t n, bool bf16);

}  // namespace accel::device_memory
