// SPDX-License-Identifier: Apache-2.0
// accel-bench amp on a CUDA device: the amp kernels (runtime/amp/amp_kernels.h) beside
// cudaMemcpy device-to-device of the same bytes, each timed with CUDA events (median of runs).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "apps/bench/bench.h"
#include "runtime/amp/amp_kernels.h"
#include "runtime/state/cuda_devices.h"

namespace accel::bench {

namespace {

double medianGpuSeconds(const std::function<void()>& run, int repeats) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  run();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    cudaEventRecord(start, nullptr);
    run();
    cudaEventRecord(stop, nullptr);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    t.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

void runAmpDevice(const Args& a, size_t n) {
  if (cudaDeviceCount() == 0) {
    std::printf("# accel-bench amp (GPU): skipped: no CUDA device is visible\n");
    return;
  }
  float *src = nullptr, *dst = nullptr, *grads = nullptr;
  uint16_t* half = nullptr;
  int* found = nullptr;
  bool ok = cudaMalloc(reinterpret_cast<void**>(&src), n * sizeof(float)) == cudaSuccess &&
            cudaMalloc(reinterpret_cast<void**>(&dst), n * sizeof(float)) == cudaSuccess &&
            cudaMalloc(reinterpret_cast<void**>(&grads), n * sizeof(float)) == cudaSuccess &&
            cudaMalloc(reinterpret_cast<void**>(&half), n * sizeof(uint16_t)) == cudaSuccess &&
            cudaMalloc(reinterpret_cast<void**>(&found), sizeof(int)) == cudaSuccess;
  if (ok) {
    cudaMemset(src, 0, n * sizeof(float));
    cudaMemset(grads, 0, n * sizeof(float));
    const int repeats = 21;
    std::vector<AmpRow> rows = {
        {"cudaMemcpy D2D", 8.0 * n,
         [&] { cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, nullptr); }},
        {"cast f32 -> fp16", 6.0 * n, [&] { cuda::castToFp16(src, half, n); }},
        {"cast fp16 -> f32", 6.0 * n, [&] { cuda::castFromFp16(half, dst, n); }},
        {"cast f32 -> bf16", 6.0 * n, [&] { cuda::castToBf16(src, half, n); }},
        {"cast bf16 -> f32", 6.0 * n, [&] { cuda::castFromBf16(half, dst, n); }},
        {"unscale + inf check", 8.0 * n, [&] { cuda::unscaleAndCheck(grads, n, 1.0f / 3.0f, found); }},
    };
    int device = 0;
    cudaGetDevice(&device);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device);
    std::printf("# accel-bench amp (GPU %d, %s): %zu floats, median of %d runs (CUDA events); GB/s read + written\n",
                device, prop.name, n, repeats);
    reportAmp(a, rows, [&](const AmpRow& r) { return medianGpuSeconds(r.run, repeats); });
  }
  cudaError_t error = cudaGetLastError();
  if (!ok || error != cudaSuccess) std::printf("# accel-bench amp (GPU): failed: %s\n", cudaGetErrorString(error));
  for (void* p : {static_cast<void*>(src), static_cast<void*>(dst), static_cast<void*>(grads), static_cast<void*>(half),
                  static_cast<void*>(found)}) {
    cudaFree(p);
  }
}

}  // namespace accel::bench
