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

// One conversion per element type pair, round-to-nearest-even where it narrows.
struct ToFp16 {
  __device__ __half operator()(float v) const { return __float2half_rn(v); }
};
struct FromFp16 {
  __device__ float operator()(__half v) const { return __half2float(v); }
};
struct ToBf16 {
  __device__ __nv_bfloat16 operator()(float v) const { return __float2bfloat16_rn(v); }
};
struct FromBf16 {
  __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
};

template <typename From, typename To, typename Convert> __global__ void cast(const From* in, To* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    out[i] = Convert()(in[i]);
  }
}

template <typename From, typename To, typename Convert> void launchCast(const void* in, void* out, size_t n, void* s) {
  cast<From, To, Convert>
      <<<blocksFor(n), kThreads, 0, toStream(s)>>>(static_cast<const From*>(in), static_cast<To*>(out), n);
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

// data *= factor through f32; Narrow/Widen are the identity for f32.
template <typename T, typename Widen, typename Narrow> __global__ void scale(T* data, size_t n, float factor) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(blockDim.x) * gridDim.x) {
    data[i] = Narrow()(__fmul_rn(Widen()(data[i]), factor));  // no contraction: the CPU's product
  }
}

struct Same {
  __device__ float operator()(float v) const { return v; }
};

}  // namespace

void castToFp16(const float* in, uint16_t* out, size_t n, void* s) { launchCast<float, __half, ToFp16>(in, out, n, s); }
void castFromFp16(const uint16_t* in, float* out, size_t n, void* s) {
  launchCast<__half, float, FromFp16>(in, out, n, s);
}
void castToBf16(const float* in, uint16_t* out, size_t n, void* s) {
  launchCast<float, __nv_bfloat16, ToBf16>(in, out, n, s);
}
void castFromBf16(const uint16_t* in, float* out, size_t n, void* s) {
  launchCast<__nv_bfloat16, float, FromBf16>(in, out, n, s);
}

void unscaleAndCheck(float* grads, size_t n, float inv_scale, int* found_inf, void* s) {
  unscale<<<blocksFor(n), kThreads, 0, toStream(s)>>>(grads, n, inv_scale, found_inf);
}

void scaleInPlace(float* data, size_t n, float factor, void* s) {
  if (n) scale<float, Same, Same><<<blocksFor(n), kThreads, 0, toStream(s)>>>(data, n, factor);
}

void scaleInPlaceHalf(uint16_t* data, size_t n, float factor, bool bf16, void* s) {
  if (n == 0) return;
  if (bf16) {
    scale<__nv_bfloat16, FromBf16, ToBf16>
        <<<blocksFor(n), kThreads, 0, toStream(s)>>>(reinterpret_cast<__nv_bfloat16*>(data), n, factor);
  } else {
    scale<__half, FromFp16, ToFp16>
        <<<blocksFor(n), kThreads, 0, toStream(s)>>>(reinterpret_cast<__half*>(data), n, factor);
  }
}

}  // namespace accel::cuda
