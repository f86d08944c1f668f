// SPDX-License-Identifier: Apache-2.0
// The bucketed reducer with threads as ranks over Gloo: means over ranks, launch order and
// overlap with backward, accumulation without sync, compression, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <mutex>
#include <thread>

#include "runtime/comm/gloo_backend.h"
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
      for (size_t k = 0; k < kCounts[p]; ++k) worst = std::max(worst, std::abs(reducer.gradient(p)[k] - meanOver(3, p, k)));
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
      for (size_t k = 0; k < kCounts[p]; ++k) worst = std::max(worst, std::abs(reducer.gradient(p)[k] - 2 * meanOver(2, p, k)));
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

TEST_CASE("reducer: a parameter never marked ready is named; initial parameters broadcast", "[ddp][reducer]") {
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
