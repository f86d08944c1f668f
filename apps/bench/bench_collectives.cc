// SPDX-License-Identifier: Apache-2.0
// accel-bench collectives: nccl-tests' report (size, count, type, time, algbw, busbw, #wrong)
// with the method of ../shared/anchors/gloo_allreduce_bench.py, so the two compare directly:
// per size, warm-up, then per iteration barrier + time one operation, the time taken as the
// maximum over ranks, the median over iterations. Every result is verified afterwards.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "apps/bench/bench.h"
#include "apps/bench/bench_verify.h"
#include "runtime/state/accelerator.h"

namespace accel::bench {

namespace {

std::pair<int, int> itersFor(size_t bytes) {  // (warm-up, timed), as the anchor does
  if (bytes <= (64u << 10)) return {50, 400};
  if (bytes <= (1u << 20)) return {20, 200};
  if (bytes <= (16u << 20)) return {5, 40};
  if (bytes <= (64u << 20)) return {3, 15};
  return {2, 8};
}

double busFactor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter") return static_cast<double>(n - 1) / n;
  return 1.0;
}

// Barrier latency: each one timed alone (the time from entering to leaving it), the maximum
// over ranks, the median over iterations.
int runBarrier(const Args& a, Accelerator& acc, Backend& b) {
  const int iters = a.iters > 0 ? a.iters : 2000;
  std::vector<double> times;
  for (int i = 0; i < 200; ++i) b.barrier()->wait();
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    b.barrier()->wait();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  b.allReduce(cpuTensor(times.data(), times.size()), ReduceOp::Max)->wait();
  if (!acc.isMainProcess()) return 0;
  if (a.json) {
    std::printf("{\"op\": \"barrier\", \"backend\": \"%s\", \"time_us\": %.3f}\n", b.name(), median(times) * 1e6);
  } else {
    std::printf("# accel-bench barrier  backend=%s world=%d: %.3f us (median of %d, max over ranks)\n", b.name(),
                b.size(), median(times) * 1e6, iters);
  }
  return 0;
}

}  // namespace

int runCollectives(const Args& a, Accelerator& acc, Backend& b) {
  if (a.op == "barrier") return runBarrier(a, acc, b);
  const int n = b.size();
  if (acc.isMainProcess() && !a.json) {
    std::printf("# accel-bench %s  backend=%s dtype=%s world=%d  (time: max over ranks, median over iterations)\n",
                a.op.c_str(), b.name(), dtypeName(a.dtype), n);
    std::printf("# %12s %12s %6s %12s %10s %10s %8s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
                "busbw(GB/s)", "#wrong");
  }
  for (size_t bytes : a.sizes) {
    const size_t width = dtypeSize(a.dtype);
    // nccl-tests' convention: the size is the whole buffer; gathers split it across ranks.
    const bool gathers = a.op == "all_gather" || a.op == "reduce_scatter";
    const size_t count = std::max<size_t>(1, bytes / width / (gathers ? static_cast<size_t>(n) : 1));
    Buffers buf((a.op == "reduce_scatter" ? count * static_cast<size_t>(n) : count) * width,
                gathers ? count * static_cast<size_t>(n) * width : width, std::string(b.name()) == "nccl");
    auto [warm, iters] = itersFor(bytes);
    if (a.iters > 0) iters = a.iters;
    for (int i = 0; i < warm; ++i) runOp(b, a.op, buf, a.dtype, count)->wait();
    std::vector<double> times;
    for (int i = 0; i < iters; ++i) {
      b.barrier()->wait();
      auto t0 = std::chrono::steady_clock::now();
      runOp(b, a.op, buf, a.dtype, count)->wait();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    b.allReduce(cpuTensor(times.data(), times.size()), ReduceOp::Max)->wait();
    const double time = median(times);
    int64_t wrong = static_cast<int64_t>(verify(b, a.op, buf, a.dtype, count));
    b.allReduce(cpuTensor(&wrong, 1), ReduceOp::Sum)->wait();
    const double payload = static_cast<double>(gathers ? count * static_cast<size_t>(n) * width : count * width);
    const double algbw = payload / time / 1e9;
    if (!acc.isMainProcess()) continue;
    if (a.json) {
      std::printf(
          "{\"op\": \"%s\", \"backend\": \"%s\", \"dtype\": \"%s\", \"bytes\": %.0f, \"time_us\": %.2f, "
          "\"algbw_gbps\": %.4f, "
          "\"busbw_gbps\": %.4f, \"wrong\": %lld}\n",
          a.op.c_str(), b.name(), dtypeName(a.dtype), payload, time * 1e6, algbw, algbw * busFactor(a.op, n),
          static_cast<long long>(wrong));
    } else {
      std::printf("  %12.0f %12zu %6s %12.2f %10.4f %10.4f %8lld\n", payload, count, dtypeName(a.dtype), time * 1e6,
                  algbw, algbw * busFactor(a.op, n), static_cast<long long>(wrong));
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace accel::bench
