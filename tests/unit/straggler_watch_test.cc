// SPDX-License-Identifier: Apache-2.0
// The straggler watch's rule (lib/launch/flight/straggler_watch.h) on arrivals made up here, and
// the clock offset's estimate (lib/launch/job/clock_offset.h). Milliseconds each.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/launch/flight/straggler_watch.h"
#include "lib/launch/job/clock_offset.h"

using StragglerArrivals = accel::launch::flight::Arrivals;
using accel::launch::flight::StragglerWatch;

namespace {

constexpr int64_t kStepMs = 1'000'000;

// `n` collectives from `first`, 10 ms apart; `late(seq, rank)` is how many ms each rank comes after the step.
template <class Late> StragglerArrivals arrivalSteps(uint64_t first, int n, int world, Late late, int64_t offset = 0) {
  StragglerArrivals a;
  a.host = "h";
  for (int r = 0; r < world; ++r) a.ranks.push_back({r, 100 + r});
  for (uint64_t s = first; s < first + static_cast<uint64_t>(n); ++s) {
    for (int r = 0; r < world; ++r) {
      a.calls.push_back({r, s, offset + static_cast<int64_t>(s) * 80 * kStepMs + late(s, r) * kStepMs + r * 1000});
    }
  }
  return a;
}

bool linesMention(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("stragglers: a rank last by 60 ms to every collective is named once, with its figures", "[flight][unit]") {
  StragglerWatch w({50, 0.8, 0.02}, 4);
  auto late = [](uint64_t, int r) { return r == 2 ? 60 : 0; };
  CHECK(w.add(arrivalSteps(1, 49, 4, late), 0, 0).empty());  // fewer than the window: no verdict yet
  const auto lines = w.add(arrivalSteps(50, 1, 4, late), 0, 0);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("straggler: rank 2 (host h, pid 102) came last to 50 of the last 50 collectives, 60.0 ms", 0) ==
        0);
  CHECK(w.add(arrivalSteps(51, 10, 4, late), 0, kStepMs).empty());  // said once, not at every batch
  CHECK(linesMention(w.add(arrivalSteps(61, 1, 4, late), 0, 61'000 * kStepMs),
                     "still a straggler: rank 2"));  // a minute later
  const auto summary = w.summary();
  REQUIRE(summary.size() >= 6);
  CHECK(summary[2].rfind("  rank 2 (host h, pid 102): 60.0 60.0 60.0 60.0", 0) == 0);  // the latest first
  // It catches up: no longer named once it is last at fewer than half as many as needed.
  const auto back = w.add(arrivalSteps(62, 50, 4, [](uint64_t, int) { return 0; }), 0, 62'000 * kStepMs);
  CHECK(linesMention(back, "rank 2 (host h, pid 102) is no longer a straggler"));
}

TEST_CASE("stragglers: a healthy job, a rank rarely or barely last, and one rank per machine are not named",
          "[flight][unit]") {
  StragglerWatch healthy({50, 0.8, 0.02}, 4);
  CHECK(healthy
            .add(arrivalSteps(1, 500, 4, [](uint64_t s, int r) { return static_cast<int>((s * 7 + r * 3) % 5); }), 0, 0)
            .empty());
  CHECK(healthy.summary().empty());
  StragglerWatch rarely({50, 0.8, 0.02}, 4);  // rank 0 writes a checkpoint every tenth step
  CHECK(rarely.add(arrivalSteps(1, 200, 4, [](uint64_t s, int r) { return r == 0 && s % 10 == 0 ? 2000 : 0; }), 0, 0)
            .empty());
  StragglerWatch barely({50, 0.8, 0.02}, 4);  // always last, by 5 ms
  CHECK(barely.add(arrivalSteps(1, 200, 4, [](uint64_t, int r) { return r == 1 ? 5 : 0; }), 0, 0).empty());
  StragglerWatch far({50, 0.8, 0.02}, 2);  // last by 30 ms to collectives 2 s apart: under 5% of the time
  StragglerArrivals a;
  for (uint64_t s = 1; s <= 60; ++s) {
    a.calls.push_back({0, s, static_cast<int64_t>(s) * 2000 * kStepMs});
    a.calls.push_back({1, s, static_cast<int64_t>(s) * 2000 * kStepMs + 30 * kStepMs});
  }
  CHECK(far.add(a, 0, 0).empty());
}

TEST_CASE("stragglers: another machine's times are moved by its offset, and a skipped collective is given up",
          "[flight][unit]") {
  StragglerWatch w({50, 0.8, 0.02}, 4);
  // Ranks 2 and 3 are on a machine whose clock runs 5 s ahead; rank 0 is the late one.
  auto here = arrivalSteps(1, 60, 4, [](uint64_t, int r) { return r == 0 ? 60 : 0; });
  StragglerArrivals mine, theirs;
  for (const auto& c : here.calls) (c.rank < 2 ? mine : theirs).calls.push_back(c);
  for (auto& c : theirs.calls) c.ns += 5000 * kStepMs;
  // Rank 1 skips collective 30: it is given up once 31 is complete, and the watch goes on.
  std::erase_if(mine.calls, [](const accel::launch::flight::Arrival& c) { return c.rank == 1 && c.seq == 30; });
  CHECK(w.add(theirs, 5000 * kStepMs, 0).empty());
  CHECK(linesMention(w.add(mine, 0, 0), "straggler: rank 0 came last to 50 of the last 50"));
}

TEST_CASE("clock offset: the echo with the shortest round trip wins, its error is half of it", "[job][unit]") {
  accel::launch::job::ClockOffset c;
  CHECK_FALSE(c.estimate());
  c.sent(1, 1000);
  c.echoed(1, 5000 + 1500, 2000);  // round trip 1000: offset 5000 +- 500 (read late: 5500)
  c.sent(2, 10000);
  c.echoed(2, 5000 + 10100, 10200);  // round trip 200: offset 5000
  c.echoed(2, 0, 10300);             // a second echo of the same probe is ignored
  c.sent(3, 20000);
  c.echoed(4, 0, 20100);  // an echo of no probe in flight too
  const auto e = c.estimate();
  REQUIRE(e);
  CHECK(e->offset_ns == 5000);
  CHECK(e->error_ns == 100);
}

TEST_CASE("stragglers: two ranks late in turn are both named under a share that allows it, and not said again",
          "[flight][unit]") {
  StragglerWatch w({50, 0.4, 0.02}, 4);
  auto turns = [](uint64_t s, int r) { return r == static_cast<int>(1 + s % 2) ? 60 : 0; };
  const auto lines = w.add(arrivalSteps(1, 60, 4, turns), 0, 0);
  CHECK(linesMention(lines, "straggler: rank 1 (host h, pid 101) came last to 25 of the last 50"));
  CHECK(linesMention(lines, "straggler: rank 2 (host h, pid 102) came last to 25 of the last 50"));
  for (uint64_t from = 61; from < 200; from += 7) CHECK(w.add(arrivalSteps(from, 7, 4, turns), 0, kStepMs).empty());
  CHECK(w.named(1));
  CHECK(w.named(2));
}
