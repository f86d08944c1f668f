// SPDX-License-Identifier: Apache-2.0
// The runtime built with nvcc: the amp kernels (runtime/amp/amp_kernels.h) and the CUDA runtime.
#include <algorithm>

#include <fmt/format.h>

#include "runtime/amp/amp_kernels.h"
#include "runtime/comm/cuda_check.h"
#include "runtime/ddp/device_memory.h"

namespace accel::device_memory {

namespace {
void check(cudaError_t result, const std::string& what) {
  checkCuda(result, "gradient buckets: " + what,
            "check that this process sees a CUDA device (`accel env`, CUDA_VISIBLE_DEVICES), or keep the "
            "gradients in CPU memory");
}
}  // namespace

void* allocateZeroed(size_t bytes, int device) {
  check(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<size_t>(bytes, 1)), fmt::format("cudaMalloc of {} bytes", bytes));
  check(cudaMemset(p, 0, bytes), "cudaMemset");
  return p;
}

void release(void* p) noexcept { cudaFree(p); }

void copy(void* to, const void* from, size_t bytes) {
  check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, nullptr), "cudaMemcpyAsync");
}

void clear(void* to, size_t bytes) { check(cudaMemsetAsync(to, 0, bytes, nullptr), "cudaMemsetAsync"); }

void scale(float* v, size_t n, float factor) { cuda::scaleInPlace(v, n, factor); }

void scaleHalf(uint16_t* v, size_t n, float factor, bool bf16) { cuda::scaleInPlaceHalf(v, n, factor, bf16); }

void toHalf(const float* from, uint16_t* to, size_t n, bool bf16) {
  bf16 ? cuda::castToBf16(from, to, n) : cuda::castToFp16(from, to, n);
}

void fromHalf(const uint16_t* from, float* to, size_t n, bool bf16) {
  bf16 ? cuda::castFromBf16(from, to, n) : cuda::castFromFp16(from, to, n);
}

}  // namespace accel::device_memory
