// SPDX-License-Identifier: Apache-2.0
// The CUDA amp kernels against the CPU reference (runtime/comm/half.h): every one of the 65536
// half bit patterns, random floats including ties, infinities, NaN and subnormals, and the
// fused unscale + check. Skips, saying why, without CUDA kernels or without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/comm/half.h"
#include "runtime/state/cuda_devices.h"
#include "tests/support/skip.h"
#ifdef ACCEL_HAVE_CUDA_KERNELS
#include <cuda_runtime_api.h>

#include "runtime/amp/amp_kernels.h"
#endif

using namespace accel;

TEST_CASE("amp kernels: GPU casts and unscale match the CPU bit for bit", "[amp][gpu]") {
#ifndef ACCEL_HAVE_CUDA_KERNELS
  accel::test::skip("this build has no CUDA kernels (nvcc was not found at configure time)");
#else
  if (cudaDeviceCount() == 0) {
    accel::test::skip("the CUDA kernels are built in, but no CUDA device is visible");
    return;
  }
  std::mt19937 random(7);
  std::vector<float> floats;
  for (uint32_t h = 0; h < 65536; ++h) floats.push_back(halfToFloat(static_cast<uint16_t>(h)));
  for (int i = 0; i < 1 << 16; ++i) floats.push_back(bitsFloat(random()));  // every exponent, NaN, inf
  const size_t n = floats.size();
  float *d_in = nullptr, *d_back = nullptr;
  uint16_t* d_half = nullptr;
  int* d_found = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&d_back), n * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&d_half), n * sizeof(uint16_t));
  cudaMalloc(reinterpret_cast<void**>(&d_found), sizeof(int));
  cudaMemcpy(d_in, floats.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  std::vector<uint16_t> half(n);
  for (bool bf : {false, true}) {
    INFO((bf ? "bf16" : "fp16"));
    if (bf) {
      cuda::castToBf16(d_in, d_half, n);
    } else {
      cuda::castToFp16(d_in, d_half, n);
    }
    cudaMemcpy(half.data(), d_half, n * sizeof(uint16_t), cudaMemcpyDeviceToHost);
    size_t mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      uint16_t want = bf ? floatToBf16(floats[i]) : floatToHalf(floats[i]);
      bool both_nan = std::isnan(floats[i]) && ((half[i] & 0x7fff) > (bf ? 0x7f80 : 0x7c00));
      mismatches += half[i] != want && !both_nan;
    }
    CHECK(mismatches == 0);
  }
  std::vector<float> grads = {2.0f, 4.0f, 8.0f};
  cudaMemcpy(d_back, grads.data(), 3 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(d_found, 0, sizeof(int));
  cuda::unscaleAndCheck(d_back, 3, 0.5f, d_found);
  int found = -1;
  cudaMemcpy(grads.data(), d_back, 3 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(&found, d_found, sizeof(int), cudaMemcpyDeviceToHost);
  CHECK(grads == std::vector<float>{1.0f, 2.0f, 4.0f});
  CHECK(found == 0);
  grads = {1.0f, std::numeric_limits<float>::infinity()};
  cudaMemcpy(d_back, grads.data(), 2 * sizeof(float), cudaMemcpyHostToDevice);
  cuda::unscaleAndCheck(d_back, 2, 0.5f, d_found);
  cudaMemcpy(&found, d_found, sizeof(int), cudaMemcpyDeviceToHost);
  CHECK(found == 1);
  for (void* p :
       {static_cast<void*>(d_in), static_cast<void*>(d_back), static_cast<void*>(d_half), static_cast<void*>(d_found)})
    cudaFree(p);
#endif
}
