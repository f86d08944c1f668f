// SPDX-License-Identifier: Apache-2.0
// accel-bench-metrics: what a Prometheus scrape of a launcher costs its loop: the rendering of
// /metrics (lib/launch/watch/metrics_text.h) for N ranks of one launcher, each rank's series
// filled, and the same with the HTTP answer around it; medians of 21 renderings, one thread.
// Built beside accel-bench, not installed: it links the launcher's core, which accel-bench does not.
// Usage: accel-bench-metrics [--json] [RANKS...] (default 8 64 1024)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lib/launch/watch/metrics_server.h"
#include "lib/launch/watch/metrics_text.h"

namespace {

using accel::launch::watch::MachineStatus;

MachineStatus machineOf(int ranks) {
  MachineStatus s;
  s.job = "accel-4f2a9c0e1b7d3a55";
  s.host = "gpu-node-017.cluster.example";
  s.role = "default";
  s.version = "0.1.0";
  s.decides = true;
  s.world_size = ranks;
  for (int r = 0; r < ranks; ++r) {
    accel::launch::watch::RankStatus rank;
    rank.rank = r;
    rank.local_rank = r;
    rank.pid = 100000 + r;
    rank.running = true;
    rank.output_age = 0.25 * r;
    rank.stdout_bytes = 123456789ULL + static_cast<uint64_t>(r);
    rank.stderr_bytes = 4096;
    rank.frames = 1000 + static_cast<uint64_t>(r);
    rank.collectives = 987654 + static_cast<uint64_t>(r);
    rank.cpu_seconds = 3600.5 + r;
    rank.resident_bytes = 8ULL << 30;
    s.ranks.push_back(rank);
  }
  return s;
}

template <class Body> double medianMs(Body body) {
  constexpr int kRuns = 21;
  std::vector<double> ms;
  for (int i = 0; i < kRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return ms[kRuns / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<int> counts;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (const int n = std::atoi(argv[i]); n > 0 && n <= 1 << 20) {
      counts.push_back(n);
    } else {
      std::fprintf(stderr, "accel-bench-metrics: '%s' is not a number of ranks (1 to 1048576)\n", argv[i]);
      return 2;
    }
  }
  if (counts.empty()) counts = {8, 64, 1024};
  for (const int n : counts) {
    const MachineStatus status = machineOf(n);
    size_t bytes = 0;
    const double render = medianMs([&] { bytes = accel::launch::watch::renderMetrics(status).size(); });
    const double answer = medianMs([&] {
      bytes = accel::launch::watch::httpAnswer(200, "OK", accel::launch::watch::kMetricsContentType,
                                               accel::launch::watch::renderMetrics(status))
                  .size();
    });
    if (json) {
      std::printf("{\"ranks\": %d, \"render_ms\": %.3f, \"answer_ms\": %.3f, \"bytes\": %zu}\n", n, render, answer,
                  bytes);
    } else {
      std::printf("%5d ranks: rendered in %.3f ms, answered in %.3f ms, %zu bytes\n", n, render, answer, bytes);
    }
  }
  return 0;
}
