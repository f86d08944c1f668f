// SPDX-License-Identifier: Apache-2.0
// accel-bench amp: GB/s of the amp kernels on CPU memory beside a plain memcpy of the same bytes
// (read + write). Median of repeated runs over a buffer larger than the caches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "apps/bench/bench.h"
#include "runtime/amp/loss_scaler.h"
#include "runtime/amp/precision.h"

namespace accel::bench {

namespace {

double medianSeconds(const std::function<void()>& run, int repeats) {
  std::vector<double> t;
  run();  // warm-up: pages touched
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

void reportAmp(const Args& a, const std::vector<AmpRow>& rows, const std::function<double(const AmpRow&)>& seconds) {
  double copy_gbps = 0;
  for (const auto& r : rows) {
    double gbps = r.bytes / seconds(r) / 1e9;
    if (copy_gbps == 0) copy_gbps = gbps;
    if (a.json) {
      std::printf("{\"kernel\": \"%s\", \"gbps\": %.3f, \"of_copy\": %.3f}\n", r.name, gbps, gbps / copy_gbps);
    } else {
      std::printf("  %-26s %8.2f GB/s  %5.0f%% of %s\n", r.name, gbps, 100 * gbps / copy_gbps, rows[0].name);
    }
  }
}

int runAmp(const Args& a) {
  const size_t n = std::max<size_t>(a.sizes.empty() ? (64u << 20) : a.sizes.back(), 4096) / sizeof(float);
  std::vector<float> src(n, 1.5f), dst(n), grads(n, 3.0f);
  std::vector<uint16_t> half(n);
  const int repeats = 9;
  std::vector<AmpRow> rows = {
      {"memcpy", 8.0 * n, [&] { std::memcpy(dst.data(), src.data(), n * sizeof(float)); }},
      {"cast f32 -> fp16", 6.0 * n, [&] { castToFp16(src.data(), half.data(), n); }},
      {"cast fp16 -> f32", 6.0 * n, [&] { castFromFp16(half.data(), dst.data(), n); }},
      {"cast f32 -> bf16", 6.0 * n, [&] { castToBf16(src.data(), half.data(), n); }},
      {"cast bf16 -> f32", 6.0 * n, [&] { castFromBf16(half.data(), dst.data(), n); }},
      {"unscale + inf check", 8.0 * n, [&] { unscaleAndCheck(grads.data(), n, 1.0f / 3.0f); }},
  };
  std::printf("# accel-bench amp (CPU): %zu floats (%.0f MiB), median of %d runs; GB/s of bytes read + written\n", n,
              n * 4.0 / (1 << 20), repeats);
  reportAmp(a, rows, [&](const AmpRow& r) { return medianSeconds(r.run, repeats); });
  runAmpDevice(a, n);
  return 0;
}

}  // namespace accel::bench
