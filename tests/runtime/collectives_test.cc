// SPDX-License-Identifier: Apache-2.0
// Gloo collectives, threads as ranks over one HashStore: world sizes 1-4, element counts 0, 1,
// 7, 1000 and 2^20+3, every dtype and op, each result compared bit for bit with a serial
// reference. Inputs are small integers (1..3), so sums and products are exact in every dtype
// and the ring's reduction order cannot change a bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <functional>
#include <thread>

#include "runtime/comm/gloo_backend.h"
#include "runtime/comm/half.h"
#include "runtime/comm/process_group.h"
#include "runtime/comm/reduce_ops.h"
#include "runtime/store/hash_store.h"

using namespace accel;

namespace {

const std::vector<DataType> kTypes = {DataType::F32, DataType::F64, DataType::F16, DataType::BF16,
                                      DataType::I32, DataType::I64, DataType::U8};
const std::vector<ReduceOp> kOps = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Min, ReduceOp::Max, ReduceOp::Product};
// ACCEL_TEST_QUICK (the sanitizer runs of scripts/test, 5-20x slower) trims the largest count.
const std::vector<size_t> kCounts = std::getenv("ACCEL_TEST_QUICK") ? std::vector<size_t>{0, 1, 7, 1000, 4099}
                                                                     : std::vector<size_t>{0, 1, 7, 1000, (1u << 20) + 3};

// The value rank r holds at element i, in dtype t, as raw bytes.
void fill(std::vector<uint8_t>& buf, DataType t, size_t n, int r, size_t offset = 0) {
  buf.resize(n * dtypeSize(t));
  for (size_t i = 0; i < n; ++i) {
    double v = static_cast<double>((static_cast<size_t>(r) + i + offset) % 3 + 1);
    void* p = buf.data() + i * dtypeSize(t);
    switch (t) {
      case DataType::F32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
      case DataType::F64: std::memcpy(p, &v, 8); break;
      case DataType::F16: { uint16_t h = floatToHalf(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
      case DataType::BF16: { uint16_t h = floatToBf16(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
      case DataType::I32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
      case DataType::I64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
      case DataType::U8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
    }
  }
}

Tensor view(std::vector<uint8_t>& buf, DataType t) { return {buf.data(), buf.size() / dtypeSize(t), t}; }

// Serial reference: rank 0's data reduced with every other rank's, by the same kernels.
std::vector<uint8_t> reference(DataType t, ReduceOp op, size_t n, int world) {
  std::vector<uint8_t> acc, other;
  fill(acc, t, n, 0);
  for (int r = 1; r < world; ++r) {
    fill(other, t, n, r);
    if (n) reduceFunction(t, op)(acc.data(), acc.data(), other.data(), n);
  }
  if (op == ReduceOp::Avg && n) finishAverage(view(acc, t), world);
  return acc;
}

// Runs `body(rank, backend)` on `world` threads sharing one HashStore.
void onRanks(int world, const std::function<void(int, Backend&)>& body) {
  HashStore store;
  store.setTimeout(std::chrono::seconds(60));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GlooOptions options;
        options.timeout = std::chrono::seconds(60);
        GlooBackend backend(store, r, world, options);
        body(r, backend);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r);
    CHECK(errors[static_cast<size_t>(r)].empty());
    if (!errors[static_cast<size_t>(r)].empty()) FAIL(errors[static_cast<size_t>(r)]);
  }
}

// A failure on any rank thread is collected as text and checked on the test thread (Catch2
// assertions are not thread-safe).
struct Mismatches {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(std::string s) {
    std::lock_guard<std::mutex> lock(mutex);
    if (list.size() < 20) list.push_back(std::move(s));
  }
};

std::string label(const char* op, DataType t, size_t n, int world, int rank) {
  return std::string(op) + " " + dtypeName(t) + " x " + std::to_string(n) + " world " + std::to_string(world) +
         " rank " + std::to_string(rank);
}

}  // namespace

TEST_CASE("all_reduce: every dtype, op, count and world size matches the serial reference", "[comm][gloo]") {
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    std::map<std::tuple<int, int, size_t>, std::vector<uint8_t>> expected;
    for (auto t : kTypes)
      for (auto op : kOps)
        for (auto n : kCounts) expected[{static_cast<int>(t), static_cast<int>(op), n}] = reference(t, op, n, world);
    onRanks(world, [&](int rank, Backend& b) {
      std::vector<uint8_t> buf;
      for (auto t : kTypes)
        for (auto op : kOps)
          for (auto n : kCounts) {
            fill(buf, t, n, rank);
            b.allReduce(view(buf, t), op)->wait();
            if (buf != expected[{static_cast<int>(t), static_cast<int>(op), n}]) {
              bad.add(label(reduceOpName(op), t, n, world, rank));
            }
          }
    });
    INFO("world " << world);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

TEST_CASE("broadcast, all_gather(v), reduce_scatter, gather, scatter, barrier", "[comm][gloo]") {
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    onRanks(world, [&](int rank, Backend& b) {
      for (auto t : kTypes)
        for (auto n : kCounts) {
          const size_t w = static_cast<size_t>(world);
          std::vector<uint8_t> buf, want, in, out, piece;
          // broadcast from the last rank
          fill(buf, t, n, rank);
          b.broadcast(view(buf, t), world - 1)->wait();
          fill(want, t, n, world - 1);
          if (buf != want) bad.add(label("broadcast", t, n, world, rank));
          // all_gather: chunk r holds rank r's data
          fill(in, t, n, rank);
          out.assign(n * w * dtypeSize(t), 0);
          b.allGather(view(in, t), view(out, t))->wait();
          for (int r = 0; r < world; ++r) {
            fill(piece, t, n, r);
            if (!piece.empty() && std::memcmp(out.data() + static_cast<size_t>(r) * piece.size(), piece.data(), piece.size())) {
              bad.add(label("all_gather", t, n, world, rank));
            }
          }
          // all_gather_v: rank r contributes n + r elements
          std::vector<size_t> counts;
          size_t total = 0;
          for (int r = 0; r < world; ++r) counts.push_back(n + static_cast<size_t>(r)), total += n + static_cast<size_t>(r);
          fill(in, t, n + static_cast<size_t>(rank), rank);
          out.assign(total * dtypeSize(t), 0);
          b.allGatherV(view(in, t), view(out, t), counts)->wait();
          size_t offset = 0;
          for (int r = 0; r < world; ++r) {
            fill(piece, t, counts[static_cast<size_t>(r)], r);
            if (!piece.empty() && std::memcmp(out.data() + offset, piece.data(), piece.size())) {
              bad.add(label("all_gather_v", t, n, world, rank));
            }
            offset += piece.size();
          }
          // reduce_scatter, every op: chunk `rank` of the element-wise reduction
          for (auto op : kOps) {
            fill(in, t, n * w, rank);
            out.assign(n * dtypeSize(t), 0);
            b.reduceScatter(view(in, t), view(out, t), op)->wait();
            std::vector<uint8_t> full = reference(t, op, n * w, world);
            if (!out.empty() && std::memcmp(out.data(), full.data() + static_cast<size_t>(rank) * out.size(), out.size())) {
              bad.add(label("reduce_scatter", t, n, world, rank) + " " + reduceOpName(op));
            }
          }
          // gather to rank 0, scatter from the last rank
          fill(in, t, n, rank);
          out.assign(n * w * dtypeSize(t), 0);
          b.gather(view(in, t), view(out, t), 0)->wait();
          if (rank == 0) {
            for (int r = 0; r < world; ++r) {
              fill(piece, t, n, r);
              if (!piece.empty() && std::memcmp(out.data() + static_cast<size_t>(r) * piece.size(), piece.data(), piece.size())) {
                bad.add(label("gather", t, n, world, rank));
              }
            }
          }
          fill(in, t, n * w, 100);  // the root's source: chunk r is what rank r should get
          out.assign(n * dtypeSize(t), 0);
          b.scatter(view(in, t), view(out, t), world - 1)->wait();
          fill(piece, t, n, 100, static_cast<size_t>(rank) * n);
          if (out != piece) bad.add(label("scatter", t, n, world, rank));
          b.barrier()->wait();
        }
    });
    INFO("world " << world);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

TEST_CASE("subgroups: new_group of some ranks reduces among them only", "[comm][gloo]") {
  HashStore store;
  store.setTimeout(std::chrono::seconds(30));
  std::vector<std::thread> threads;
  std::vector<int> result(4, -1);
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      ProcessGroup world(store, "pg", r, 4, [](Store& s, int rank, int n) {
        return std::make_unique<GlooBackend>(s, rank, n, GlooOptions{});
      });
      auto odd = world.newGroup({1, 3});
      int value = r + 1;
      if (odd) odd->backend().allReduce(cpuTensor(&value, 1), ReduceOp::Sum)->wait();
      result[static_cast<size_t>(r)] = value;
      world.backend().barrier()->wait();
    });
  }
  for (auto& t : threads) t.join();
  CHECK(result == std::vector<int>{1, 6, 3, 6});
}

TEST_CASE("work: errors and misuse are reported, not hidden", "[comm][gloo][failure]") {
  onRanks(2, [&](int rank, Backend& b) {
    if (rank == 0) {  // Catch2 assertions from one thread only
      float x = 1;
      std::vector<float> too_small(1);
      CHECK_THROWS_WITH(b.allGather(cpuTensor(&x, 1), cpuTensor(too_small.data(), 1)),
                        Catch::Contains("output holds 1 elements, expected 2 x 1"));
      Tensor gpu = cpuTensor(&x, 1);
      gpu.device = DeviceType::CUDA;
      CHECK_THROWS_WITH(b.allReduce(gpu, ReduceOp::Sum), Catch::Contains("the Gloo backend works on CPU memory"));
    }
    auto w = b.barrier();
    w->wait();
    if (rank == 0) {
      CHECK(w->isCompleted());
      CHECK_FALSE(w->exception());
    }
  });
}

TEST_CASE("half precision conversion: known bit patterns, ties, infinities, NaN, subnormals", "[comm][half]") {
  CHECK(floatToHalf(1.0f) == 0x3c00);
  CHECK(floatToHalf(-2.0f) == 0xc000);
  CHECK(floatToHalf(65504.0f) == 0x7bff);
  CHECK(floatToHalf(65520.0f) == 0x7c00);  // the tie above the largest half rounds to infinity
  CHECK(floatToHalf(1.0f + 1.0f / 2048) == 0x3c00);  // tie, rounds to even
  CHECK(floatToHalf(1.0f + 3.0f / 2048) == 0x3c02);  // tie, rounds to even (up)
  CHECK(floatToHalf(5.9604645e-8f) == 0x0001);  // smallest subnormal
  CHECK(floatToHalf(2.9802322e-8f) == 0x0000);  // half of it: tie to even (zero)
  CHECK(halfToFloat(0x0001) == 5.9604645e-8f);
  CHECK(halfToFloat(0x7c00) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  CHECK(floatToBf16(1.0f) == 0x3f80);
  CHECK(floatToBf16(bitsFloat(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(floatToBf16(bitsFloat(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(floatToBf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  int round_trip_failures = 0;  // every finite positive half survives half -> float -> half
  for (uint32_t h = 0; h < 0x7c00; ++h) round_trip_failures += floatToHalf(halfToFloat(static_cast<uint16_t>(h))) != h;
  CHECK(round_trip_failures == 0);
}
