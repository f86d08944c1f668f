// SPDX-License-Identifier: Apache-2.0
// The flight recorder where threads meet (runtime/comm/flight_recorder.h, lib/common/flight_ring.h):
// a reader that reads a ring while a writer fills it sees only whole entries (TSan runs this),
// a Gloo group's collectives go in as the user made them, each queued, started and completed; and
// groups are numbered alike on every rank (one left out of a group, the call check's group).
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/comm/flight_recorder.h"
#include "tests/runtime/gloo_ranks.h"

using namespace accel;
using accel::flight::State;

TEST_CASE("flight recorder: a reader beside a writer reads whole entries only", "[runtime][flight]") {
  constexpr uint32_t kCapacity = 64;
  std::vector<uint64_t> memory(accel::flight::ringBytes(kCapacity) / 8);
  accel::flight::Writer w(memory.data(), kCapacity, 0, 1, accel::flight::Writer::Clock::Nanoseconds);
  w.addGroup("g", 1, 0);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t s = 1; s <= 20000; ++s) {
      accel::flight::Call c;
      c.seq = s;
      c.count = 3 * s;
      const uint64_t i = w.begin(c, false, static_cast<int64_t>(s));
      w.start(i, static_cast<int64_t>(s) + 1);
      w.end(i, true, static_cast<int64_t>(s) + 2);
    }
    done = true;
  });
  size_t reads = 0, bad = 0;
  while (!done || reads == 0) {
    const auto d = accel::flight::readFlight(memory.data(), memory.size() * 8);
    if (!d) continue;  // the writer had not begun
    ++reads;
    uint64_t previous = 0;
    for (const auto& c : d->calls) {
      const bool whole = c.count == 3 * c.seq && c.enqueued_ns == static_cast<int64_t>(c.seq) && c.seq > previous &&
                         (c.state != State::Completed || c.ended_ns == c.enqueued_ns + 2);
      bad += whole ? 0 : 1;
      previous = c.seq;
    }
  }
  writer.join();
  INFO(reads << " reads");
  CHECK(bad == 0);
  const auto last = accel::flight::readFlight(memory.data(), memory.size() * 8);
  REQUIRE(last);
  CHECK(last->written == 20000);
  CHECK(last->calls.size() == kCapacity);
  CHECK(last->calls.back().state == State::Completed);
}

TEST_CASE("flight recorder: a group's collectives are recorded as queued, started and completed", "[runtime][flight]") {
  const auto before = flightDump();
  REQUIRE(before);  // ACCEL_FR_BUFFER_SIZE unset: 2000 entries in this process's memory
  const auto errors = test::onGlooRanks(2, [](int, Backend& group) {
    std::vector<float> data(10, 1.0f);
    for (int i = 0; i < 3; ++i) group.allReduce(cpuTensor(data.data(), data.size()), ReduceOp::Sum)->wait();
    group.broadcast(cpuTensor(data.data(), 4), 1)->wait();
  });
  CHECK(errors == std::vector<std::string>{"", ""});
  const auto after = flightDump();
  REQUIRE(after);
  REQUIRE(after->groups.size() == before->groups.size() + 2);
  const unsigned first = static_cast<unsigned>(before->groups.size());
  CHECK(after->groups[first].size == 2);
  for (unsigned g = first; g < first + 2; ++g) {
    std::vector<const accel::flight::Call*> calls;
    for (const auto& c : after->calls) {
      if (c.group == g) calls.push_back(&c);
    }
    REQUIRE(calls.size() == 5);  // the barrier every rank makes first, three all_reduces, a broadcast
    CHECK(calls[0]->kind == static_cast<unsigned>(CallKind::Barrier));
    CHECK(calls[1]->kind == static_cast<unsigned>(CallKind::AllReduce));
    CHECK(calls[1]->count == 10);
    CHECK(calls[4]->kind == static_cast<unsigned>(CallKind::Broadcast));
    CHECK(calls[4]->root == 1);
    for (size_t i = 0; i < calls.size(); ++i) {
      CHECK(calls[i]->seq == i + 1);
      CHECK(calls[i]->state == State::Completed);
      CHECK(calls[i]->enqueued_ns > 0);
      CHECK(calls[i]->started_ns >= calls[i]->enqueued_ns);
      CHECK(calls[i]->ended_ns >= calls[i]->started_ns);
    }
  }
}

TEST_CASE("flight recorder: a rank outside a group takes its number, and the call check's group takes none",
          "[runtime][flight]") {
  const auto before = flightDump();
  REQUIRE(before);
  flightSkipGroup();  // what ProcessGroup::newGroup does on a rank it leaves out
  {
    FlightUnrecorded unrecorded;
    CHECK(flightGroup("check", 2, 0) == kNoFlightGroup);
  }
  const int next = flightGroup("after", 2, 1);
  const auto after = flightDump();
  REQUIRE(after);
  REQUIRE(after->groups.size() == before->groups.size() + 2);
  CHECK(after->groups[before->groups.size()].label == "(not a member)");
  CHECK(next == static_cast<int>(before->groups.size()) + 1);
  CHECK(after->groups.back().label == "after");
}
