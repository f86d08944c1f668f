// SPDX-License-Identifier: Apache-2.0
// The NCCL backend on CUDA memory: ranks are threads, one GPU each, so a machine with G GPUs
// tests worlds of 1..G. Without NCCL in the build, or without a GPU, each case says why it
// skipped.
#include <catch2/catch.hpp>

#include <thread>

#include "runtime/state/cuda_devices.h"
#include "runtime/store/hash_store.h"
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
