// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "runtime/ddp/ddp_kernels.h"

namespace accel::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocksFor(size_t n) {
  size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks ? blocks : 1) : 65535);
}

__global__ void scale(float* data, size_t n, float factor) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    data[i] = __fmul_rn(data[i], factor);  // no contraction: the same product as the CPU path
  }
}

__global__ void scaleFp16(__half* data, size_t n, float factor) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    data[i] = __float2half_rn(__fmul_rn(__half2float(data[i]), factor));
  }
}

__global__ void scaleBf16(__nv_bfloat16* data, size_t n, float factor) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    data[i] = __float2bfloat16_rn(__fmul_rn(__bfloat162float(data[i]), factor));
  }
}

}  // namespace

void scaleInPlace(float* data, size_t n, float factor, void* stream) {
  if (n) scale<<<blocksFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(data, n, factor);
}

void scaleInPlaceHalf(uint16_t* data, size_t n, float factor, bool bf16, void* stream) {
  if (n == 0) return;
  if (bf16) {
    scaleBf16<<<blocksFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(reinterpret_cast<__nv_bfloat16*>(data), n, factor);
  } else {
    scaleFp16<<<blocksFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(reinterpret_cast<__half*>(data), n, factor);
  }
}

}  // namespace accel::cuda
