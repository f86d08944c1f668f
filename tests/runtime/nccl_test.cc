// SPDX-License-Identifier: Apache-2.0
// The NCCL backend on CUDA memory: ranks are threads, one GPU each, so a machine with G GPUs
// tests worlds of 1..G. Without NCCL in the build, or without a GPU, each case says why it
// skipped.
#include <catch2/catch.hpp>

#include <thread>

#include "lib/common/error.h"
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
// Each of `world` threads: sum of rank+1 over every rank, on its own GPU; returns wrong values.
int sumOnGpus(int world, size_t count) {
  HashStore store;
  std::vector<int> wrong(static_cast<size_t>(world), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      NcclBackend nccl(store, r, world, r, {});
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
      wrong[static_cast<size_t>(r)] = bad;
    });
  }
  for (auto& t : threads) t.join();
  int total = 0;
  for (int w : wrong) total += w;
  return total;
}

// Each of `world` threads owns a Reducer with device buckets over NCCL; gradient i of rank r
// holds (r + 1) * (i + 1). Returns the elements that are not the mean over ranks after finish().
int reduceDeviceGradients(int world, Compression compression) {
  HashStore store;
  std::vector<int> wrong(static_cast<size_t>(world), -1);
  std::vector<std::thread> threads;
  const std::vector<size_t> counts = {3, 70000, 5, 300000};  // several buckets at 256 KiB
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      NcclBackend nccl(store, r, world, r, {});
      Reducer reducer(nccl, counts, {.first_bucket_bytes = 256 << 10, .bucket_bytes = 256 << 10,
                                     .compression = compression, .device = DeviceType::CUDA, .device_index = r});
      int bad = 0;
      for (int step = 0; step < 2; ++step) {  // twice: the buckets are reused
        reducer.zeroGradients();
        for (size_t i = counts.size(); i-- > 0;) {
          std::vector<float> host(counts[i], static_cast<float>((r + 1) * (i + 1)));
          cudaMemcpy(reducer.gradient(i), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
          reducer.markReady(i);
        }
        reducer.finish();
        for (size_t i = 0; i < counts.size(); ++i) {
          std::vector<float> host(counts[i]);
          cudaMemcpy(host.data(), reducer.gradient(i), host.size() * sizeof(float), cudaMemcpyDeviceToHost);
          const float want = static_cast<float>((world + 1) * (i + 1)) / 2.0f;
          for (float v : host) bad += std::abs(v - want) > want * (compression == Compression::None ? 1e-6f : 1e-2f);
        }
      }
      wrong[static_cast<size_t>(r)] = bad;
    });
  }
  for (auto& t : threads) t.join();
  int total = 0;
  for (int w : wrong) total += w;
  return total;
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
  auto errors = accel::test::onGlooRanks(1, [](int, Backend& group) {
    try {
      Reducer reducer(group, {16}, {.device = DeviceType::CUDA});
      FAIL("a Reducer with CUDA buckets was made without a CUDA device");
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find("gradient buckets") != std::string::npos);
    }
  });
  CHECK(errors == std::vector<std::string>(1));
}
