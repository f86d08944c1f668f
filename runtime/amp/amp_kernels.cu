// SPDX-License-Identifier: Apache-2.0
// Grid-stride kernels: one launch covers any n; vectorisation is left to the compiler.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "runtime/amp/amp_kernels.h"

namespace accel::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocksFor(size_t n) {
  size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks ? blocks : 1) : 65535);
}

cudaStream_t toStream(void* s) { return static_cast<cudaStream_t>(s); }

__global__ void toFp16(const float* in, __half* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    out[i] = __float2half_rn(in[i]);
  }
}

__global__ void fromFp16(const __half* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    out[i] = __half2float(in[i]);
  }
}

__global__ void toBf16(const float* in, __nv_bfloat16* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    out[i] = __float2bfloat16_rn(in[i]);
  }
}

__global__ void fromBf16(const __nv_bfloat16* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    out[i] = __bfloat162float(in[i]);
  }
}

__global__ void unscale(float* g, size_t n, float inv_scale, int* found_inf) {
  bool bad = false;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    float v = g[i] * inv_scale;
    bad |= !isfinite(v);
    g[i] = v;
  }
  if (bad) *found_inf = 1;  // a benign race: every writer stores the same value
}

}  // namespace

void castToFp16(const float* in, uint16_t* out, size_t n, void* s) {
  toFp16<<<blocksFor(n), kThreads, 0, toStream(s)>>>(in, reinterpret_cast<__half*>(out), n);
}
void castFromFp16(const uint16_t* in, float* out, size_t n, void* s) {
  fromFp16<<<blocksFor(n), kThreads, 0, toStream(s)>>>(reinterpret_cast<const __half*>(in), out, n);
}
void castToBf16(const float* in, uint16_t* out, size_t n, void* s) {
  toBf16<<<blocksFor(n), kThreads, 0, toStream(s)>>>(in, reinterpret_cast<__nv_bfloat16*>(out), n);
}
void castFromBf16(const uint16_t* in, float* out, size_t n, void* s) {
  fromBf16<<<blocksFor(n), kThreads, 0, toStream(s)>>>(reinterpret_cast<const __nv_bfloat16*>(in), out, n);
}
void unscaleAndCheck(float* grads, size_t n, float inv_scale, int* found_inf, void* s) {
  unscale<<<blocksFor(n), kThreads, 0, toStream(s)>>>(grads, n, inv_scale, found_inf);
}

}  // namespace accel::cuda
