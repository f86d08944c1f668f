// SPDX-License-Identifier: Apache-2.0
// The NCCL backend on CUDA memory: ranks are threads, one GPU each, so a machine with G GPUs
// tests worlds of 1..G. Without NCCL in the build, or without a GPU, each case says why it
// skipped.
#include <catch2/catch.hpp>

#include <functional>
#include <thread>

#include "lib/common/error.h"
#include "runtime/comm/half.h"
#include "runtime/ddp/reducer.h"
#include "runtime/state/cuda_devices.h"
#include "runtime/store/hash_store.h"
#include "tests/runtime/gloo_ranks.h"
#ifdef ACCEL_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "runtime/comm/nccl_backend.h"
#endif

using namespace accel;

namespace {

#ifdef ACCEL_HAVE_NCCL
// Runs body(rank, group) on `world` threads, one GPU and NCCL communicator each; body returns
// its count of wrong values, or a negative number for a broken run. Returns the total, or -1
// when any rank failed or threw (its message on stderr).
int onGpuRanks(int world, const std::function<int(int, NcclBackend&)>& body) {
  HashStore store;
  std::vector<int> wrong(static_cast<size_t>(world), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        NcclBackend nccl(store, r, world, r, {});
        wrong[static_cast<size_t>(r)] = body(r, nccl);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());  // wrong[r] stays -1
      }
    });
  }
  for (auto& t : threads) t.join();
  int total = 0;
  for (int w : wrong) {
    if (w < 0) return -1;
    total += w;
  }
  return total;
}

// Sum of rank+1 over every rank, each on its own GPU; returns the wrong values.
int sumOnGpus(int world, size_t count) {
  return onGpuRanks(world, [&](int r, NcclBackend& nccl) {
    std::vector<float> host(count, static_cast<float>(r + 1));
    float* device = nullptr;
    cudaMalloc(reinterpret_cast<void**>(&device), count * sizeof(float));
    cudaMemcpy(device, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
    nccl.allReduce({device, count, DataType::F32, DeviceType::CUDA, r}, ReduceOp::Sum)->wait();
    nccl.barrier()->wait();
    cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(device);
    int bad = 0;
    for (float v : host) bad += v != static_cast<float>(world * (world + 1) / 2);
    return bad;
  });
}

// Each rank owns a Reducer with device buckets over NCCL; gradient i of rank r holds
// (r + 1) * (i + 1) / 3, which fp16 and bf16 cannot represent, so a compressed wire shows even
// with one GPU. Returns the elements that are not the (rounded) mean over ranks, or -1 when a
// rank threw or not every bucket was launched before finish().
int reduceDeviceGradients(int world, Compression compression) {
  const std::vector<size_t> counts = {3, 70000, 5, 300000};  // several buckets at 256 KiB
  auto round = [compression](float v) {
    if (compression == Compression::Fp16) return halfToFloat(floatToHalf(v));
    if (compression == Compression::Bf16) return bf16ToFloat(floatToBf16(v));
    return v;
  };
  return onGpuRanks(world, [&](int r, NcclBackend& nccl) {
    Reducer reducer(nccl, counts, {.first_bucket_bytes = 256 << 10, .bucket_bytes = 256 << 10,
                                   .compression = compression, .device = DeviceType::CUDA, .device_index = r});
    int bad = 0;
    for (int step = 0; step < 2; ++step) {  // twice: the buckets are reused
      reducer.zeroGradients();
      for (size_t i = counts.size(); i-- > 0;) {
        std::vector<float> host(counts[i], static_cast<float>((r + 1) * (i + 1)) / 3.0f);
        cudaMemcpy(reducer.gradient(i), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
        reducer.markReady(i);
      }
      if (reducer.launched() != reducer.buckets().size()) return -1;
      reducer.finish();
      for (size_t i = 0; i < counts.size(); ++i) {
        std::vector<float> host(counts[i]);
        cudaMemcpy(host.data(), reducer.gradient(i), host.size() * sizeof(float), cudaMemcpyDeviceToHost);
        // One rank: the value itself through the wire's rounding. More: the mean, to the
        // wire's precision (each rank's pre-divided share is rounded, then NCCL sums them).
        const float exact = static_cast<float>((world + 1) * (i + 1)) / 6.0f;
        const float want = world == 1 ? round(static_cast<float>(i + 1) / 3.0f) : exact;
        // Each of `world` roundings and world - 1 sums loses at most one unit roundoff.
        const float unit = compression == Compression::None ? 6e-8f : compression == Compression::Fp16 ? 4.9e-4f : 3.9e-3f;
        const float tolerance = world == 1 ? 0.0f : 2.0f * static_cast<float>(world) * unit * exact;
        for (float v : host) bad += std::abs(v - want) > tolerance;
      }
    }
    return bad;
  });
}
#endif

}  // namespace

TEST_CASE("nccl: all_reduce and barrier on CUDA memory, one GPU per rank", "[comm][nccl][gpu]") {
#ifndef ACCEL_HAVE_NCCL
  WARN("skipped: this build has no CUDA/NCCL (they are found under /usr/local/cuda at configure time)");
#else
  const int gpus = cudaDeviceCount();
  if (gpus == 0) {
    WARN("skipped: NCCL " + NcclBackend::version() + " is built in, but no CUDA device is visible");
    return;
  }
  for (int world = 1; world <= gpus; ++world) {
    for (size_t count : {size_t{1}, size_t{1000}, (size_t{1} << 20) + 3}) {
      INFO(world << " GPUs, " << count << " floats");
      CHECK(sumOnGpus(world, count) == 0);
    }
  }
#endif
}

TEST_CASE("reducer: gradients in CUDA memory, reduced over NCCL bucket by bucket", "[ddp][reducer][nccl][gpu]") {
#ifndef ACCEL_HAVE_NCCL
  WARN("skipped: this build has no CUDA/NCCL (they are found under /usr/local/cuda at configure time)");
#else
  const int gpus = cudaDeviceCount();
  if (gpus == 0) {
    WARN("skipped: NCCL " + NcclBackend::version() + " is built in, but no CUDA device is visible");
    return;
  }
  for (int world = 1; world <= gpus; ++world) {
    for (auto c : {Compression::None, Compression::Fp16, Compression::Bf16}) {
      INFO(world << " GPUs, compression " << static_cast<int>(c));
      CHECK(reduceDeviceGradients(world, c) == 0);
    }
  }
#endif
}

TEST_CASE("reducer: device buckets without a usable CUDA device are a clear error", "[ddp][reducer]") {
  if (cudaDeviceCount() > 0) {
    WARN("skipped: a CUDA device is visible, so device buckets work here (the GPU test covers them)");
    return;
  }
  std::string message;  // Catch assertions stay on the test's thread
  auto errors = accel::test::onGlooRanks(1, [&](int, Backend& group) {
    try {
      Reducer reducer(group, std::vector<size_t>{16}, {.device = DeviceType::CUDA});
      message = "no error: a Reducer with CUDA buckets was made without a CUDA device";
    } catch (const Error& e) {
      message = e.what();
    }
  });
  CHECK(errors == std::vector<std::string>(1));
  INFO(message);
  CHECK(message.find("gradient buckets") != std::string::npos);
}
