// SPDX-License-Identifier: Apache-2.0
// accel-bench flight: what the flight recorder adds to one collective, measured where it is
// spent (lib/common/flight_ring.h as runtime/comm/op_queue.h drives it), beside the clock read
// alone. The queue reads the clock when a call starts whether or not it records, and the
// recorder takes that reading: a call run at once adds its stores and one read (the end), a
// queued call its stores and two (when it was queued, the end). Medians of 9 runs of 2^20 calls
// each, one thread.
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
  const int64_t started = flight::nowNs();  // the queue's own reading
  const double now = medianNs([&](uint64_t s) {
    call.seq = s;
    w.end(w.begin(call, true, started), true, flight::nowNs());
  });
  const double queued = medianNs([&](uint64_t s) {
    call.seq = s;
    const uint64_t i = w.begin(call, false, flight::nowNs());
    w.start(i, started);
    w.end(i, true, flight::nowNs());
  });
  if (args.json) {
    std::printf("{\"op\": \"flight\", \"clock_ns\": %.2f, \"run_at_once_ns\": %.2f, \"queued_ns\": %.2f}\n", clock, now,
                queued);
  } else {
    std::printf(
        "the clock read alone: %.1f ns\nadded to a call run at once (1 clock read): %.1f ns\n"
        "added to a queued call (2 clock reads): %.1f ns\n",
        clock, now, queued);
  }
  return 0;
}

}  // namespace accel::bench
