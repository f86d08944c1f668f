// SPDX-License-Identifier: Apache-2.0
// The bucketed reducer with threads as ranks over Gloo: means over ranks, launch order and
// overlap with backward, accumulation without sync, compression, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <mutex>
#include <thread>

#include "lib/common/error.h"
#include "runtime/comm/gloo/gloo_backend.h"
#include "runtime/comm/half.h"
#include "runtime/ddp/reducer.h"
#include "runtime/store/hash_store.h"
#include "tests/runtime/gloo_ranks.h"

using namespace accel;

namespace {

// Small caps force several buckets: params of 300, 200, 500, 100 floats -> buckets {3}, {2}, {0, 1}.
const std::vector<size_t> kCounts = {300, 200, 500, 100};
const ReducerOptions kSmall{.first_bucket_bytes = 1600, .bucket_bytes = 1600};

float gradValue(int rank, size_t param, size_t k) { return static_cast<float>(rank + 1) * 0.5f + param + k % 7; }

float meanOver(int world, size_t param, size_t k) {
  float sum = 0;
  for (int r = 0; r < world; ++r) sum += gradValue(r, param, k);
  return sum / static_cast<float>(world);
}

}  // namespace

TEST_CASE("reducer: every gradient becomes the mean over ranks, bucket by bucket", "[ddp][reducer]") {
  std::mutex m;
  float worst = 0;
  size_t bucket_count = 0;
  auto errors = accel::test::onGlooRanks(3, [&](int rank, Backend& g) {
    Reducer reducer(g, kCounts, kSmall);
    for (int step = 0; step < 2; ++step) {
      reducer.zeroGradients();
      for (size_t p = kCounts.size(); p-- > 0;) {  // backward: last parameters first
        for (size_t k = 0; k < kCounts[p]; ++k) reducer.gradient(p)[k] = gradValue(rank, p, k);
        reducer.markReady(p);
      }
      reducer.finish();
    }
    std::lock_guard<std::mutex> lock(m);
    bucket_count = reducer.buckets().size();
    for (size_t p = 0; p < kCounts.size(); ++p)
      for (size_t k = 0; k < kCounts[p]; ++k)
        worst = std::max(worst, std::abs(reducer.gradient(p)[k] - meanOver(3, p, k)));
  });
  CHECK(errors == std::vector<std::string>(3));
  CHECK(bucket_count == 3);
  CHECK(worst < 1e-5f);
}

TEST_CASE("reducer: the first bucket's all-reduce starts before the last gradient is ready", "[ddp][reducer]") {
  std::mutex m;
  std::vector<size_t> launched_before_last;
  auto errors = accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    Reducer reducer(g, kCounts, kSmall);
    for (size_t p : {3u, 2u, 1u}) {
      for (size_t k = 0; k < kCounts[p]; ++k) reducer.gradient(p)[k] = gradValue(rank, p, k);
      reducer.markReady(p);
    }
    size_t launched = reducer.launched();  // parameter 0, the last gradient of backward, is not ready yet
    reducer.markReady(0);
    reducer.finish();
    std::lock_guard<std::mutex> lock(m);
    launched_before_last.push_back(launched);
  });
  CHECK(errors == std::vector<std::string>(2));
  CHECK(launched_before_last == std::vector<size_t>{2, 2});  // buckets {3} and {2} already on the wire
}

TEST_CASE("reducer: accumulation without sync, then one reduction of the sum", "[ddp][reducer]") {
  std::mutex m;
  float worst = 0;
  auto errors = accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    Reducer reducer(g, kCounts, kSmall);
    reducer.zeroGradients();
    for (bool sync : {false, true}) {  // two micro-batches, gradients added into the buckets
      reducer.setSync(sync);
      for (size_t p = kCounts.size(); p-- > 0;) {
        for (size_t k = 0; k < kCounts[p]; ++k) reducer.gradient(p)[k] += gradValue(rank, p, k);
        reducer.markReady(p);
      }
      reducer.finish();  // errors surface through onRanks (Catch2 asserts from one thread only)
    }
    std::lock_guard<std::mutex> lock(m);
    for (size_t p = 0; p < kCounts.size(); ++p)
      for (size_t k = 0; k < kCounts[p]; ++k)
        worst = std::max(worst, std::abs(reducer.gradient(p)[k] - 2 * meanOver(2, p, k)));
  });
  CHECK(errors == std::vector<std::string>(2));
  CHECK(worst < 1e-5f);
}

TEST_CASE("reducer: fp16 and bf16 compression on the wire", "[ddp][reducer]") {
  for (auto compression : {Compression::Fp16, Compression::Bf16}) {
    std::mutex m;
    float worst = 0;
    ReducerOptions options = kSmall;
    options.compression = compression;
    auto errors = accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
      Reducer reducer(g, kCounts, options);
      reducer.zeroGradients();
      for (size_t p = kCounts.size(); p-- > 0;) {
        for (size_t k = 0; k < kCounts[p]; ++k) reducer.gradient(p)[k] = gradValue(rank, p, k);
        reducer.markReady(p);
      }
      reducer.finish();
      std::lock_guard<std::mutex> lock(m);
      for (size_t p = 0; p < kCounts.size(); ++p)
        for (size_t k = 0; k < kCounts[p]; ++k) {
          float want = meanOver(2, p, k);
          worst = std::max(worst, std::abs(reducer.gradient(p)[k] - want) / std::abs(want));
        }
    });
    CHECK(errors == std::vector<std::string>(2));
    CHECK(worst < (compression == Compression::Fp16 ? 1e-3f : 1e-2f));  // 11 vs 8 significant bits
  }
}

TEST_CASE("reducer: a parameter never marked ready is named, initial parameters broadcast", "[ddp][reducer]") {
  std::mutex m;
  std::vector<float> received;
  auto errors = accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    Reducer reducer(g, kCounts, kSmall);
    for (size_t p : {3u, 2u, 1u}) reducer.markReady(p);
    if (rank == 0) {
      CHECK_THROWS_WITH(reducer.finish(), Catch::Contains("parameter(s) 0 were never marked ready"));
    } else {
      try {
        reducer.finish();
      } catch (const std::exception&) {
      }
    }
    std::vector<float> weights(4, static_cast<float>(rank * 10 + 1));
    broadcastParameters(g, {cpuTensor(weights.data(), weights.size())});
    std::lock_guard<std::mutex> lock(m);
    received.insert(received.end(), weights.begin(), weights.end());
  });
  CHECK(received == std::vector<float>(8, 1.0f));
}

TEST_CASE("reducer: the caller's own buffers (copied in, mean copied back), f32/fp16/bf16 gradients",
          "[ddp][reducer]") {
  // p0: the caller's f32 buffer; p1: reducer-held bf16; p2: the caller's fp16; p3: reducer-held f32.
  const std::vector<size_t> counts = {300, 200, 100, 50};
  std::mutex m;
  float worst[4] = {0, 0, 0, 0};
  size_t bucket_count = 0;
  bool kept_during_accumulation = true;
  auto errors = accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    std::vector<float> own32(counts[0]);
    std::vector<uint16_t> own16(counts[2]);
    Reducer reducer(g,
                    {{own32.data(), counts[0], DataType::F32},
                     {nullptr, counts[1], DataType::BF16},
                     {own16.data(), counts[2], DataType::F16},
                     {nullptr, counts[3], DataType::F32}},
                    kSmall);
    auto set = [&](size_t p, size_t k, float v) {
      if (p == 1)
        static_cast<uint16_t*>(reducer.gradientData(1))[k] = floatToBf16(v);
      else if (p == 2)
        own16[k] = floatToHalf(v);
      else
        reducer.gradient(p)[k] = v;  // p0's gradient() is the caller's buffer itself
    };
    auto get = [&](size_t p, size_t k) {
      if (p == 1) return bf16ToFloat(static_cast<uint16_t*>(reducer.gradientData(1))[k]);
      if (p == 2) return halfToFloat(own16[k]);
      return p == 0 ? own32[k] : reducer.gradient(p)[k];
    };
    // An accumulation step first: nothing is reduced, the caller's buffers keep their sums.
    reducer.zeroGradients();
    reducer.setSync(false);
    for (size_t p = counts.size(); p-- > 0;) {
      for (size_t k = 0; k < counts[p]; ++k) set(p, k, gradValue(rank, p, k) / 3.0f);
      reducer.markReady(p);
    }
    reducer.finish();
    bool kept = own32[5] == gradValue(rank, 0, 5) / 3.0f &&
                halfToFloat(own16[5]) == halfToFloat(floatToHalf(gradValue(rank, 2, 5) / 3.0f));
    reducer.setSync(true);
    reducer.zeroGradients();
    for (size_t p = counts.size(); p-- > 0;) {
      for (size_t k = 0; k < counts[p]; ++k) set(p, k, gradValue(rank, p, k) / 3.0f);
      reducer.markReady(p);
    }
    reducer.finish();
    std::lock_guard<std::mutex> lock(m);
    kept_during_accumulation &= kept;
    bucket_count = reducer.buckets().size();
    for (size_t p = 0; p < counts.size(); ++p)
      for (size_t k = 0; k < counts[p]; ++k) {
        float want = meanOver(2, p, k) / 3.0f;  // thirds: not representable in fp16 or bf16
        worst[p] = std::max(worst[p], std::abs(get(p, k) - want) / std::abs(want));
      }
  });
  CHECK(errors == std::vector<std::string>(2));
  CHECK(kept_during_accumulation);
  CHECK(bucket_count >= 3);  // f32, bf16 and fp16 gradients never share a bucket
  CHECK(worst[0] < 1e-6f);   // f32 in the caller's buffer: exact up to float rounding
  CHECK(worst[3] < 1e-6f);
  CHECK(worst[2] < 2e-3f);    // fp16: 11 significant bits, rounded at pre-division and sum
  CHECK(worst[1] < 1.6e-2f);  // bf16: 8 significant bits
  CHECK(worst[1] > 0.0f);     // really carried in bf16 (a silent f32 path would be exact)
}

TEST_CASE("reducer: gradients that cannot be averaged, or read as the wrong type, are errors", "[ddp][reducer]") {
  std::string integer_error, type_error;
  auto errors = accel::test::onGlooRanks(1, [&](int, Backend& g) {
    try {
      Reducer reducer(g, std::vector<GradientBuffer>{{nullptr, 8, DataType::I32}});
    } catch (const Error& e) {
      integer_error = e.what();
    }
    Reducer reducer(g, std::vector<GradientBuffer>{{nullptr, 8, DataType::BF16}});
    try {
      reducer.gradient(0);
    } catch (const Error& e) {
      type_error = e.what();
    }
  });
  CHECK(errors == std::vector<std::string>(1));
  CHECK(integer_error.find("i32 gradients cannot be averaged") != std::string::npos);
  CHECK(type_error.find("the gradient is bf16, not f32") != std::string::npos);
}

TEST_CASE("reducer: gradients written already divided are summed as they are, the caller's refused", "[ddp][reducer]") {
  std::mutex m;
  float worst = 0;
  std::string refusal;
  auto errors = accel::test::onGlooRanks(2, [&](int rank, Backend& g) {
    Reducer reducer(g, kCounts, kSmall);
    reducer.zeroGradients();
    for (size_t p = kCounts.size(); p-- > 0;) {
      for (size_t k = 0; k < kCounts[p]; ++k) reducer.gradient(p)[k] = gradValue(rank, p, k) / 2;
      reducer.markReadyDivided(p);
    }
    reducer.finish();
    float local_worst = 0;
    for (size_t p = 0; p < kCounts.size(); ++p)
      for (size_t k = 0; k < kCounts[p]; ++k)
        local_worst = std::max(local_worst, std::abs(reducer.gradient(p)[k] - meanOver(2, p, k)));
    std::vector<float> mine(4, 1.0f);
    Reducer own(g, std::vector<GradientBuffer>{{mine.data(), mine.size(), DataType::F32}});
    std::lock_guard<std::mutex> lock(m);
    worst = std::max(worst, local_worst);
    try {
      own.markReadyDivided(0);
    } catch (const Error& e) {
      refusal = e.what();
    }
  });
  CHECK(errors == std::vector<std::string>(2));
  CHECK(worst < 1e-5f);
  CHECK(refusal.find("parameter 0's gradient is the caller's") != std::string::npos);
}
