// SPDX-License-Identifier: Apache-2.0
// accel-bench flight: what the flight recorder adds to one collective, measured where it is
// spent (lib/common/flight_ring.h as runtime/comm/op_queue.h drives it): a call run at once (begin
// as running, end: two reads of the recorder's clock, flight::ticks) and a queued one (begin,
// start, end: three), beside one read of that clock and one clock_gettime. Medians of 9 runs of
// 2^20 calls each, one thread.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "apps/bench/bench.h"
#include "lib/common/flight_ring.h"

namespace accel::bench {

namespace {

constexpr int kCalls = 1 << 20, kRuns = 9;

template <typename Body> double medianNs(Body body) {
  std::vector<double> ns;
  for (int r = 0; r < kRuns; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) body(static_cast<uint64_t>(i));
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kCalls);
  }
  std::nth_element(ns.begin(), ns.begin() + kRuns / 2, ns.end());
  return ns[kRuns / 2];
}

}  // namespace

int runFlight(const Args& args) {
  constexpr uint32_t kCapacity = 2000;
  std::vector<uint64_t> memory(flight::ringBytes(kCapacity) / 8);
  flight::Writer w(memory.data(), kCapacity, 0, 1);
  const unsigned group = w.addGroup("bench", 1, 0);
  flight::Call call;
  call.group = group;
  call.count = 1024;
  volatile int64_t sink = 0;
  const double clock = medianNs([&](uint64_t) { sink = sink + flight::nowNs(); });
  const double tick = medianNs([&](uint64_t) { sink = sink + flight::ticks(); });
  const double now = medianNs([&](uint64_t s) {
    call.seq = s;
    w.end(w.begin(call, true, flight::ticks()), true, flight::ticks());
  });
  const double queued = medianNs([&](uint64_t s) {
    call.seq = s;
    const uint64_t i = w.begin(call, false, flight::ticks());
    w.start(i, flight::ticks());
    w.end(i, true, flight::ticks());
  });
  if (args.json) {
    std::printf(
        "{\"op\": \"flight\", \"clock_ns\": %.2f, \"tick_ns\": %.2f, \"run_at_once_ns\": %.2f, \"queued_ns\": %.2f}\n",
        clock, tick, now, queued);
  } else {
    std::printf(
        "one clock_gettime: %.1f ns\none read of the recorder's clock: %.1f ns\na call run at once: %.1f ns\n"
        "a queued call: %.1f ns\n",
        clock, tick, now, queued);
  }
  return 0;
}

}  // namespace accel::bench
