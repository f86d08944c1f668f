// SPDX-License-Identifier: Apache-2.0
// Gloo collectives, threads as ranks over one HashStore: world sizes 1-4, element counts 0, 1,
// 7, 1000 and 2^20+3, every dtype and op, each result compared bit for bit with a serial
// reference. Inputs are small integers (1..3), so sums and products are exact in every dtype
// and the ring's reduction order cannot change a bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/comm/gloo/gloo_backend.h"
#include "runtime/comm/half.h"
#include "runtime/comm/process_group.h"
#include "runtime/comm/reduce_ops.h"
#include "runtime/store/hash_store.h"
#include "tests/runtime/collective_checks.h"
#include "tests/runtime/exchange_checks.h"

using namespace accel;
using namespace accel::test;

namespace {

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

}  // namespace

TEST_CASE("all_reduce: every dtype, op, count and world size matches the serial reference", "[comm][gloo]") {
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    const AllReduceExpected expected = allReduceExpected(world);
    onRanks(world, [&](int rank, Backend& b) { checkAllReduce(b, rank, world, hostPlacement(), expected, bad); });
    INFO("world " << world);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

TEST_CASE("broadcast, all_gather(v), reduce_scatter, gather, scatter, barrier", "[comm][gloo]") {
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    onRanks(world, [&](int rank, Backend& b) { checkOtherCollectives(b, rank, world, hostPlacement(), bad); });
    INFO("world " << world);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

TEST_CASE("all_to_all and all_to_all_v: every dtype, count and world size, bit for bit", "[comm][gloo]") {
  for (int world : {1, 2, 3, 4}) {
    Mismatches bad;
    onRanks(world, [&](int rank, Backend& b) { checkAllToAll(b, rank, world, hostPlacement(), bad); });
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
      std::vector<std::vector<int>> seen;  // each group's world ranks, as its factory was told
      ProcessGroup world(store, "pg", r, 4, [&seen](Store& s, int rank, int n, const std::vector<int>& world_ranks) {
        seen.push_back(world_ranks);
        return std::make_unique<GlooBackend>(s, rank, n, GlooOptions{});
      });
      auto odd = world.newGroup({1, 3});
      int value = r + 1;
      if (odd) odd->backend().allReduce(cpuTensor(&value, 1), ReduceOp::Sum)->wait();
      result[static_cast<size_t>(r)] = value;
      world.backend().barrier()->wait();
      const std::vector<std::vector<int>> want =
          odd ? std::vector<std::vector<int>>{{0, 1, 2, 3}, {1, 3}} : std::vector<std::vector<int>>{{0, 1, 2, 3}};
      if (seen != want) result[static_cast<size_t>(r)] = -2;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(result == std::vector<int>{1, 6, 3, 6});  // -2: a factory told the wrong world ranks
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
      CHECK_THROWS_WITH(b.allReduce(gpu, ReduceOp::Sum), Catch::Contains("Gloo collectives work on CPU memory"));
    }
    auto w = b.barrier();
    w->wait();
    if (rank == 0) {
      CHECK(w->isCompleted());
      CHECK_FALSE(w->exception());
    }
  });
}

TEST_CASE("gloo: the front door refuses the same misuse as every transport", "[comm][gloo]") {
  for (int world : {2, 3}) {
    Mismatches bad;
    onRanks(world, [&](int rank, Backend& b) { checkMisuse(b, rank, world, bad); });
    INFO("world " << world);
    CHECK(bad.list.empty());
    for (const auto& m : bad.list) WARN(m);
  }
}

TEST_CASE("half precision conversion: known bit patterns, ties, infinities, NaN, subnormals", "[comm][half]") {
  CHECK(floatToHalf(1.0f) == 0x3c00);
  CHECK(floatToHalf(-2.0f) == 0xc000);
  CHECK(floatToHalf(65504.0f) == 0x7bff);
  CHECK(floatToHalf(65520.0f) == 0x7c00);            // the tie above the largest half rounds to infinity
  CHECK(floatToHalf(1.0f + 1.0f / 2048) == 0x3c00);  // tie, rounds to even
  CHECK(floatToHalf(1.0f + 3.0f / 2048) == 0x3c02);  // tie, rounds to even (up)
  CHECK(floatToHalf(5.9604645e-8f) == 0x0001);       // smallest subnormal
  CHECK(floatToHalf(2.9802322e-8f) == 0x0000);       // half of it: tie to even (zero)
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
