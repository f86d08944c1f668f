// SPDX-License-Identifier: Apache-2.0
// Groundwork of the training layer: DDP's bucket assignment and GradScaler's algorithm.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "runtime/amp/loss_scaler.h"
#include "runtime/amp/precision.h"
#include "runtime/comm/gloo/gloo_backend.h"
#include "runtime/comm/half.h"
#include "runtime/ddp/bucketing.h"
#include "runtime/store/hash_store.h"
#include "tests/runtime/gloo_ranks.h"

using namespace accel;

namespace {

std::vector<std::vector<size_t>> indices(const std::vector<Bucket>& buckets) {
  std::vector<std::vector<size_t>> out;
  for (const auto& b : buckets) out.push_back(b.params);
  return out;
}

}  // namespace

TEST_CASE("bucketing: DDP's limits, registration order packed, then reversed", "[ddp][bucketing]") {
  // f32 gradients of 0.8 MB, 0.4 MB, 12 MB, 20 MB and 8 MB.
  std::vector<GradientInfo> grads = {{200000}, {100000}, {3000000}, {5000000}, {2000000}};
  auto buckets = assignBuckets(grads);
  CHECK(indices(buckets) == std::vector<std::vector<size_t>>{{4}, {2, 3}, {0, 1}});
  CHECK(buckets.back().bytes == 1200000);  // the first (small) bucket is reduced last
  // A gradient above the cap gets a bucket of its own; a custom cap gives uniform buckets.
  auto own = assignBuckets({{10}, {50'000'000}, {10}}, 1 << 20, 1 << 20);
  CHECK(indices(own) == std::vector<std::vector<size_t>>{{2}, {0, 1}});
  auto uniform = assignBuckets({{300}, {300}, {300}, {300}}, 2400, 2400);
  CHECK(indices(uniform) == std::vector<std::vector<size_t>>{{2, 3}, {0, 1}});
}

TEST_CASE("bucketing: dtypes and devices never share a bucket", "[ddp][bucketing]") {
  std::vector<GradientInfo> grads = {
      {10, DataType::F32}, {10, DataType::F16}, {10, DataType::F32}, {10, DataType::F32, DeviceType::CUDA}};
  auto buckets = assignBuckets(grads);
  CHECK(indices(buckets) == std::vector<std::vector<size_t>>{{3}, {1}, {0, 2}});
  CHECK(assignBuckets({}).empty());
}

TEST_CASE("loss scaler: GradScaler's defaults, unscale with the inf check, growth and backoff", "[amp][scaler]") {
  LossScaler scaler;
  CHECK(scaler.scale() == 65536.0f);
  CHECK(scaler.scaleLoss(0.5f) == 32768.0f);
  std::vector<float> g = {65536.0f, -131072.0f};
  scaler.unscale(g.data(), g.size());
  CHECK(g == std::vector<float>{1.0f, -2.0f});
  CHECK(scaler.step(nullptr));
  CHECK(scaler.growthTracker() == 1);
  g = {std::numeric_limits<float>::infinity(), 1.0f};
  scaler.unscale(g.data(), g.size());
  CHECK_FALSE(scaler.step(nullptr));  // overflow: skip the step, halve, reset the tracker
  CHECK(scaler.scale() == 32768.0f);
  CHECK(scaler.growthTracker() == 0);
  LossScaler fast({.init_scale = 4.0f, .growth_interval = 3});
  for (int i = 0; i < 3; ++i) CHECK(fast.step(nullptr));
  CHECK(fast.scale() == 8.0f);  // doubled after 3 clean steps
  std::vector<float> nan = {std::nanf("")};
  CHECK(unscaleAndCheck(nan.data(), 1, 1.0f));
  LossScaler off({.enabled = false});
  CHECK(off.scale() == 1.0f);
  CHECK(off.step(nullptr));
}

TEST_CASE("loss scaler: state round trip", "[amp][scaler]") {
  LossScaler a({.init_scale = 1024.0f, .growth_interval = 7});
  a.step(nullptr);
  a.step(nullptr);
  LossScaler b;
  b.loadState(a.state());
  CHECK(b.scale() == 1024.0f);
  CHECK(b.growthTracker() == 2);
  CHECK_THROWS_WITH(b.loadState({1, 2, 3}), Catch::Contains("loss scaler state has 3 bytes"));
}

TEST_CASE("loss scaler: when only one rank overflows, every rank skips the step", "[amp][scaler]") {
  std::vector<int> applied(3, -1);
  std::vector<float> scales(3, 0);
  auto errors = accel::test::onGlooRanks(3, [&](int r, Backend& group) {
    LossScaler scaler;
    std::vector<float> g = {r == 1 ? std::numeric_limits<float>::infinity() : 1.0f};
    scaler.unscale(g.data(), g.size());
    applied[static_cast<size_t>(r)] = scaler.step(&group);
    scales[static_cast<size_t>(r)] = scaler.scale();
  });
  CHECK(errors == std::vector<std::string>(3));
  CHECK(applied == std::vector<int>{0, 0, 0});
  CHECK(scales == std::vector<float>{32768.0f, 32768.0f, 32768.0f});
}

TEST_CASE("precision: casts, master weights and the precision names", "[amp][precision]") {
  std::vector<float> in = {1.0f, 1.0f + 1.0f / 2048, 65504.0f, 1e-8f, -2.5f};
  std::vector<uint16_t> half(in.size());
  std::vector<float> back(in.size());
  castToFp16(in.data(), half.data(), in.size());
  CHECK(half == std::vector<uint16_t>{0x3c00, 0x3c00, 0x7bff, 0x0000, 0xc100});  // 1e-8 underflows
  castFromFp16(half.data(), back.data(), in.size());
  CHECK(back[4] == -2.5f);
  castToBf16(in.data(), half.data(), in.size());
  CHECK(half[0] == 0x3f80);
  castFromBf16(half.data(), back.data(), in.size());
  CHECK(back[0] == 1.0f);
  MasterWeights weights({{1.0f + 1.0f / 1024, 3.14159265f}}, Precision::Bf16);
  CHECK(weights.working()[0] == std::vector<float>{1.0f, 3.140625f});  // rounded copy
  CHECK(weights.masters()[0][0] == 1.0f + 1.0f / 1024);                // masters untouched
  CHECK(parsePrecision("no") == Precision::Fp32);
  CHECK(parsePrecision("bf16") == Precision::Bf16);
  CHECK_THROWS_WITH(parsePrecision("fp8"), Catch::Contains("fp8 is not supported"));
}

TEST_CASE("clip_grad_norm: local and across ranks", "[amp][clip]") {
  std::vector<float> a = {3, 0}, b = {4};
  double norm = clipGradNorm({a.data(), b.data()}, {2, 1}, 1.0);
  CHECK(norm == Approx(5.0));
  CHECK(a[0] == Approx(0.6f).epsilon(1e-5));
  CHECK(b[0] == Approx(0.8f).epsilon(1e-5));
  std::vector<double> norms(2);
  auto errors = accel::test::onGlooRanks(2, [&](int r, Backend& group) {
    std::vector<float> shard = {r == 0 ? 3.0f : 4.0f};  // sharded: the global norm is 5
    norms[static_cast<size_t>(r)] = clipGradNorm({shard.data()}, {1}, 10.0, &group);
  });
  CHECK(errors == std::vector<std::string>(2));
  CHECK(norms == std::vector<double>{5.0, 5.0});
}

TEST_CASE("precision: vectorised casts agree with the scalar reference on every input class", "[amp][precision]") {
  std::mt19937 random(99);
  std::vector<float> in;
  for (uint32_t h = 0; h < 65536; ++h) in.push_back(halfToFloat(static_cast<uint16_t>(h)));
  for (int i = 0; i < 100003; ++i) {  // every exponent, NaN, inf, subnormals; an odd tail length
    uint32_t bits = static_cast<uint32_t>(random());
    float f;
    std::memcpy(&f, &bits, 4);
    in.push_back(f);
  }
  std::vector<uint16_t> fast(in.size());
  size_t bf16_bad = 0, fp16_bad = 0;
  castToBf16(in.data(), fast.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) bf16_bad += fast[i] != floatToBf16(in[i]);
  castToFp16(in.data(), fast.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    bool both_nan = std::isnan(in[i]) && (fast[i] & 0x7fff) > 0x7c00;  // F16C keeps NaN payloads
    fp16_bad += fast[i] != floatToHalf(in[i]) && !both_nan;
  }
  CHECK(bf16_bad == 0);
  CHECK(fp16_bad == 0);
  std::vector<float> back(in.size());
  castFromFp16(fast.data(), back.data(), in.size());
  size_t back_bad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    float want = halfToFloat(fast[i]);
    back_bad += !(back[i] == want || (std::isnan(back[i]) && std::isnan(want)));
  }
  CHECK(back_bad == 0);
}
