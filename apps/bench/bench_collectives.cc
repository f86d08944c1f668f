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
#include "apps/bench/bench_memory.h"
#include "runtime/comm/half.h"
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

void setAll(std::vector<uint8_t>& buf, DataType t, double value) {
  const size_t n = buf.size() / dtypeSize(t);
  for (size_t i = 0; i < n; ++i) {
    void* p = buf.data() + i * dtypeSize(t);
    switch (t) {
      case DataType::F32: {
        float f = static_cast<float>(value);
        std::memcpy(p, &f, 4);
        break;
      }
      case DataType::F64: std::memcpy(p, &value, 8); break;
      case DataType::F16: {
        uint16_t h = floatToHalf(static_cast<float>(value));
        std::memcpy(p, &h, 2);
        break;
      }
      case DataType::BF16: {
        uint16_t h = floatToBf16(static_cast<float>(value));
        std::memcpy(p, &h, 2);
        break;
      }
      case DataType::I32: {
        int32_t x = static_cast<int32_t>(value);
        std::memcpy(p, &x, 4);
        break;
      }
      case DataType::I64: {
        int64_t x = static_cast<int64_t>(value);
        std::memcpy(p, &x, 8);
        break;
      }
      case DataType::U8: {
        uint8_t x = static_cast<uint8_t>(value);
        std::memcpy(p, &x, 1);
        break;
      }
    }
  }
}

size_t countWrong(const std::vector<uint8_t>& buf, DataType t, double expected) {
  std::vector<uint8_t> want(buf.size());
  setAll(want, t, expected);
  size_t wrong = 0, width = dtypeSize(t);
  for (size_t i = 0; i < buf.size(); i += width) wrong += std::memcmp(&buf[i], &want[i], width) != 0;
  return wrong;
}

struct Buffers {
  Buffers(size_t in_bytes, size_t out_bytes, bool device)
      : in(in_bytes, device), out(out_bytes, device), device_(device) {}
  BenchBuffer in, out;
  bool device_;
  Tensor tensor(BenchBuffer& b, DataType t) const {
    return {b.data(), b.bytes() / dtypeSize(t), t, device_ ? DeviceType::CUDA : DeviceType::CPU};
  }
};

// One operation of `op` on `count` elements per rank; returns its Work.
WorkPtr runOp(Backend& b, const std::string& op, Buffers& buf, DataType t, size_t count) {
  Tensor in = buf.tensor(buf.in, t), out = buf.tensor(buf.out, t);
  if (op == "all_reduce") return b.allReduce(in, ReduceOp::Sum);
  if (op == "broadcast") return b.broadcast(in, 0);
  if (op == "all_gather") return b.allGather(in.slice(0, count), out);
  return b.reduceScatter(in, out.slice(0, count), ReduceOp::Sum);
}

// Verification: every rank contributes rank+1.
size_t verify(Backend& b, const std::string& op, Buffers& buf, DataType t, size_t count) {
  const int n = b.size(), r = b.rank();
  std::vector<uint8_t> host(buf.in.bytes());
  setAll(host, t, r + 1);
  buf.in.upload(host);
  runOp(b, op, buf, t, count)->wait();
  if (op == "all_reduce") return countWrong(buf.in.download(), t, n * (n + 1) / 2.0);
  if (op == "broadcast") return countWrong(buf.in.download(), t, 1);
  std::vector<uint8_t> out = buf.out.download();
  if (op == "reduce_scatter") {
    out.resize(count * dtypeSize(t));
    return countWrong(out, t, n * (n + 1) / 2.0);
  }
  size_t wrong = 0, chunk = count * dtypeSize(t);
  for (int k = 0; k < n; ++k) {
    std::vector<uint8_t> part(out.begin() + static_cast<long>(k * chunk),
                              out.begin() + static_cast<long>((k + 1) * chunk));
    wrong += countWrong(part, t, k + 1);
  }
  return wrong;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
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
