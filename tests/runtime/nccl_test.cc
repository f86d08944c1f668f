// SPDX-License-Identifier: Apache-2.0
// The NCCL backend on CUDA memory: ranks are threads, one GPU each, so a machine with G GPUs
// tests worlds of 1..G (NCCL refuses two ranks on one device, so one GPU means a world of one).
// Every call goes in the flight recorder. Without NCCL in the build, or without a GPU, each case
// says why it skipped. scripts/test-gpu
// runs these on a GPU machine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <thread>

#include "lib/common/error.h"
#include "runtime/comm/flight_recorder.h"
#include "runtime/comm/half.h"
#include "runtime/ddp/reducer.h"
#include "runtime/state/cuda_devices.h"
#include "runtime/store/hash_store.h"
#include "tests/runtime/collective_checks.h"
#include "tests/runtime/exchange_checks.h"
#include "tests/runtime/gloo_ranks.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#ifdef ACCEL_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "runtime/comm/nccl/nccl_backend.h"
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

// Device memory for the shared collective checks: each buffer is copied to the rank's GPU
// before the operation and back after it.
test::Placement cudaPlacement() {
  test::Placement at;
  at.place = [](std::vector<uint8_t>& host, DataType t) {
    void* device = nullptr;
    if (cudaMalloc(&device, std::max<size_t>(host.size(), 1)) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
    cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice);
    int index = 0;
    cudaGetDevice(&index);
    return Tensor{device, host.size() / dtypeSize(t), t, DeviceType::CUDA, index};
  };
  at.fetch = [](Tensor t, std::vector<uint8_t>& host) {
    cudaMemcpy(host.data(), t.data, host.size(), cudaMemcpyDeviceToHost);
    cudaFree(t.data);
  };
  at.exact_average = false;
  return at;
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
    Reducer reducer(nccl, counts,
                    {.first_bucket_bytes = 256 << 10,
                     .bucket_bytes = 256 << 10,
                     .compression = compression,
                     .device = DeviceType::CUDA,
                     .device_index = r});
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
        const float unit = compression == Compression::None   ? 6e-8f
                           : compression == Compression::Fp16 ? 4.9e-4f
                                                              : 3.9e-3f;
        const float tolerance = world == 1 ? 0.0f : 2.0f * static_cast<float>(world) * unit * exact;
        for (float v : host) bad += std::abs(v - want) > tolerance;
      }
    }
    return bad;
  });
}
#endif

// The GPUs the NCCL cases run on; 0 after saying why they skip.
int gpusOrSkip() {
#ifndef ACCEL_HAVE_NCCL
  accel::test::skip("this build has no CUDA/NCCL (they are found under /usr/local/cuda at configure time)");
  return 0;
#else
  const int gpus = cudaDeviceCount();
  if (gpus == 0) accel::test::skip("NCCL " + NcclBackend::version() + " is built in, but no CUDA device is visible");
  return gpus;
#endif
}

}  // namespace

TEST_CASE("nccl: every collective, op, dtype and count on CUDA memory matches the serial reference",
          "[comm][nccl][gpu]") {
  const int gpus = gpusOrSkip();
  if (gpus == 0) return;
#ifdef ACCEL_HAVE_NCCL
  if (gpus == 1) WARN("one GPU: NCCL runs a world of one only (it refuses two ranks on one device)");
  for (int world = 1; world <= gpus; ++world) {
    test::Mismatches bad;
    const test::AllReduceExpected expected = test::allReduceExpected(world);
    const int broken = onGpuRanks(world, [&](int r, NcclBackend& nccl) {
      test::checkAllReduce(nccl, r, world, cudaPlacement(), expected, bad);
      test::checkOtherCollectives(nccl, r, world, cudaPlacement(), bad);
      test::checkAllToAll(nccl, r, world, cudaPlacement(), bad);
      return 0;
    });
    INFO("world of " << world << " GPUs");
    CHECK(broken == 0);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
  WARN("NCCL " << NcclBackend::version() << ": worlds of 1 to " << gpus << " GPUs checked");
  // Every call is in this process's flight recorder, in its NCCL group, completed once its
  // stream finished it (flight_recorder.h).
  const auto dump = flightDump();
  REQUIRE(dump);
  size_t completed = 0, unfinished = 0;
  for (const auto& call : dump->calls) {
    if (call.group >= dump->groups.size() || dump->groups[call.group].label.rfind("nccl rank", 0) != 0) continue;
    (call.state == flight::State::Completed ? completed : unfinished) += 1;
  }
  CHECK(completed > 0);
  CHECK(unfinished == 0);
#endif
}

// A rank stuck on its GPU (its stream held) must become an error naming the rank and the
// operation within the timeout, on every rank, under the real launcher.
TEST_CASE("nccl: a stalled rank becomes an error within the timeout, not a hang", "[comm][nccl][gpu][failure]") {
  const int gpus = gpusOrSkip();
  if (gpus == 0) return;
#ifdef ACCEL_HAVE_NCCL
  test::TempDir dir;
  auto env = test::hermeticEnv(dir, {{"GLOO_SOCKET_IFNAME", "lo"}});
  env.erase("ACCEL_NVML_LIBRARY");  // the launcher counts the real GPUs
  env.erase("ACCEL_CUDA_LIBRARY");
  const int timeout_s = 5;
  auto r = test::run({test::accelBinary(), "launch", "--num_processes", std::to_string(gpus), "--main_process_port",
                      "0", test::runtimeWorker(), "nccl-stall", std::to_string(timeout_s)},
                     {}, env, 120000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("[rank 0] error after") != std::string::npos);
  CHECK(r.out.find("barrier failed on rank 0 of " + std::to_string(gpus)) != std::string::npos);
  CHECK(r.out.find("no progress for " + std::to_string(timeout_s) + " s") != std::string::npos);
  CHECK(r.out.find("rescue") == std::string::npos);
  auto at = r.out.find("error after ");
  const double seconds = at == std::string::npos ? 0 : std::atof(r.out.c_str() + at + 12);
  WARN("the stalled barrier failed after " << seconds << " s (timeout " << timeout_s << " s)");
  CHECK(seconds >= timeout_s);
  CHECK(seconds < timeout_s + 5);
#endif
}

TEST_CASE("reducer: gradients in CUDA memory, reduced over NCCL bucket by bucket", "[ddp][reducer][nccl][gpu]") {
  const int gpus = gpusOrSkip();
  if (gpus == 0) return;
#ifdef ACCEL_HAVE_NCCL
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
    accel::test::skip("a CUDA device is visible, so device buckets work here (the GPU test covers them)");
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
