// SPDX-License-Identifier: Apache-2.0
// The flight recorder's pure parts: the ring (lib/common/flight_ring.h) written and read back,
// across its wrap and with an entry caught mid-write; its text (flight_text.h) and JSON
// (flight_json.h); torch's JSON dump read as a record (torch_records.h); and the verdict
// (flight_verdict.h) on records made here: a rank that never
// entered a call, ranks whose calls differ, ranks without a record, a job that parts nowhere.
// A writer thread against a reader, for TSan, is in tests/runtime/flight_recorder_test.cc.
#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "lib/common/error.h"
#include "lib/common/flight_ring.h"
#include "lib/launch/flight/flight_json.h"
#include "lib/launch/flight/flight_text.h"
#include "lib/launch/flight/flight_verdict.h"
#include "lib/launch/flight/torch_records.h"

using namespace accel;
using namespace accel::launch::flight;
using accel::flight::Call;
using accel::flight::State;

namespace {

constexpr unsigned kAllReduce = 0, kBroadcast = 1, kAllGather = 2, kF32 = 0;

struct Ring {
  explicit Ring(uint32_t capacity) : bytes(accel::flight::ringBytes(capacity)), memory(bytes / 8 + 1) {}
  void* data() { return memory.data(); }
  size_t bytes;
  std::vector<uint64_t> memory;
};

Call call(uint64_t seq, unsigned kind = kAllReduce, uint64_t count = 1000) {
  Call c;
  c.seq = seq;
  c.kind = kind;
  c.dtype = kF32;
  c.count = count;
  return c;
}

// A rank's record: calls 1..completed done, then `open` (when not 0) entered and not completed.
RankRecord rank(int r, uint64_t completed, uint64_t open, unsigned open_kind = kAllReduce) {
  RankFlight f;
  f.read_ns = 100'000'000'000;
  f.realtime_offset_ns = 1'000;
  f.dump.rank = r;
  f.dump.world = 4;
  f.dump.groups = {{"shm rank " + std::to_string(r) + " of 4", 4, r}};
  for (uint64_t s = 1; s <= completed; ++s) {
    Call c = call(s, s == completed && completed == 5 ? kBroadcast : kAllReduce);
    c.root = c.kind == kBroadcast ? 0 : -1;
    c.state = State::Completed;
    c.enqueued_ns = c.started_ns = static_cast<int64_t>(s) * 1'000'000'000;
    f.dump.calls.push_back(c);
  }
  if (open) {
    Call c = call(open, open_kind);
    c.state = State::Started;
    c.enqueued_ns = c.started_ns = 68'800'000'000;  // 31.2 s before the read
    f.dump.calls.push_back(c);
  }
  f.dump.written = f.dump.calls.size();
  return {r, r == 3 ? "b" : "a", 4240 + r, f, ""};
}

}  // namespace

TEST_CASE("flight ring: calls written are read back in order, with their groups and states", "[flight][unit]") {
  Ring ring(8);
  accel::flight::Writer w(ring.data(), 8, 2, 4, accel::flight::Writer::Clock::Nanoseconds);
  CHECK(w.addGroup("gloo rank 2 of 4", 4, 2) == 0);
  CHECK(w.addGroup(std::string(80, 'x'), 2, 1) == 1);  // a long label is cut, not overflowed
  const uint64_t a = w.begin(call(1), true, 10);
  w.end(a, true, 20);
  Call queued = call(2, kAllGather, 7);
  queued.group = 1;
  queued.root = 3;
  const uint64_t b = w.begin(queued, false, 30);
  w.start(b, 40);
  const auto d = accel::flight::readFlight(ring.data(), ring.bytes);
  REQUIRE(d);
  CHECK(d->rank == 2);
  CHECK(d->world == 4);
  CHECK(d->capacity == 8);
  CHECK(d->written == 2);
  CHECK(d->torn == 0);
  REQUIRE(d->groups.size() == 2);
  CHECK(d->groups[0].label == "gloo rank 2 of 4");
  CHECK(d->groups[1].label == std::string(accel::flight::kMaxLabel, 'x'));
  REQUIRE(d->calls.size() == 2);
  CHECK(d->calls[0].state == State::Completed);
  CHECK(d->calls[0].started_ns == 10);
  CHECK(d->calls[0].ended_ns == 20);
  CHECK(d->calls[1].state == State::Started);
  CHECK(d->calls[1].kind == kAllGather);
  CHECK(d->calls[1].group == 1);
  CHECK(d->calls[1].root == 3);
  CHECK(d->calls[1].count == 7);
  CHECK(d->calls[1].enqueued_ns == 30);
  CHECK(d->calls[1].started_ns == 40);
}

TEST_CASE("flight ring: past its capacity it keeps the newest calls, and an old index no longer updates",
          "[flight][unit]") {
  Ring ring(4);
  accel::flight::Writer w(ring.data(), 4, 0, 1, accel::flight::Writer::Clock::Nanoseconds);
  w.addGroup("g", 1, 0);
  std::vector<uint64_t> index;
  for (uint64_t s = 1; s <= 10; ++s) index.push_back(w.begin(call(s), true, static_cast<int64_t>(s)));
  w.end(index[0], true, 99);  // entry 0's slot now holds call 9: left alone
  const auto d = accel::flight::readFlight(ring.data(), ring.bytes);
  REQUIRE(d);
  CHECK(d->written == 10);
  REQUIRE(d->calls.size() == 4);
  CHECK(d->calls.front().seq == 7);
  CHECK(d->calls.back().seq == 10);
  for (const Call& c : d->calls) CHECK(c.state == State::Started);
}

TEST_CASE("flight ring: an entry being written is left out as torn, and memory without a ring reads as none",
          "[flight][unit]") {
  Ring ring(4);
  CHECK_FALSE(accel::flight::readFlight(ring.data(), ring.bytes));  // zeros: no writer started
  accel::flight::Writer w(ring.data(), 4, 0, 1, accel::flight::Writer::Clock::Nanoseconds);
  w.begin(call(1), true, 1);
  w.begin(call(2), true, 2);
  // Entry 1's stamp as a writer leaves it mid-write (odd): the first entry word of slot 1.
  auto* words = reinterpret_cast<std::atomic<uint64_t>*>(ring.data());
  const size_t slot1 = 8 + accel::flight::kMaxGroups * 8 + 8;
  words[slot1].store(3);
  auto d = accel::flight::readFlight(ring.data(), ring.bytes);
  REQUIRE(d);
  CHECK(d->torn == 1);
  REQUIRE(d->calls.size() == 1);
  CHECK(d->calls[0].seq == 1);
  CHECK_FALSE(accel::flight::readFlight(ring.data(), ring.bytes / 2));  // too short for its capacity
  words[0].store(1);                                                    // another magic: another layout
  CHECK_FALSE(accel::flight::readFlight(ring.data(), ring.bytes));
}

TEST_CASE("flight text: a record round-trips, keeps its last calls, and bad text names its line", "[flight][unit]") {
  const RankRecord r = rank(3, 5, 0);
  const std::string text = encodeFlight(*r.flight);
  const RankFlight back = decodeFlight(text);
  CHECK(back.read_ns == r.flight->read_ns);
  CHECK(back.dump.rank == 3);
  REQUIRE(back.dump.groups.size() == 1);
  CHECK(back.dump.groups[0].label == "shm rank 3 of 4");
  REQUIRE(back.dump.calls.size() == 5);
  CHECK(back.dump.calls[4].kind == kBroadcast);
  CHECK(back.dump.calls[4].state == State::Completed);
  CHECK(back.realtime_offset_ns == r.flight->realtime_offset_ns);
  CHECK(decodeFlight(encodeFlight(*r.flight, 2)).dump.calls.front().seq == 4);
  CHECK_THROWS_WITH(decodeFlight("hello\n"), "flight record line 1: not a flight record");
  CHECK_THROWS_WITH(decodeFlight(text.substr(0, text.size() - 30)),
                    Catch::Contains("flight record line 9: ") && Catch::Contains("numbers, not 11"));
  std::string bad_state = text;
  bad_state.replace(bad_state.rfind(" 3 "), 3, " 9 ");
  CHECK_THROWS_WITH(decodeFlight(bad_state), "flight record line 9: state 9 is none");
}

TEST_CASE("flight verdict: the rank that never entered a call is named with its last one and its host",
          "[flight][unit]") {
  const FlightVerdict v = judgeFlights({rank(0, 5, 6), rank(1, 5, 6), rank(2, 5, 6), rank(3, 5, 0)});
  CHECK(v.line ==
        "all_reduce (f32 x 1000) sum #6 of group 0: ranks 0-2 entered it 31.2 s ago; rank 3 (host b, pid 4243) "
        "never did: its last was broadcast (f32 x 1000) from rank 0 #5");
  CHECK(v.stuck == std::vector<int>{3});
  CHECK(v.mismatch.empty());
  CHECK(v.notes.empty());
}

TEST_CASE("flight verdict: ranks whose calls differ at one place are named, and ranks without a record listed",
          "[flight][unit]") {
  RankRecord none{2, "a", 4242, std::nullopt, "it did not answer within 3 s"};
  const FlightVerdict v = judgeFlights({rank(0, 5, 6), rank(1, 5, 6), none, rank(3, 5, 6, kAllGather)});
  CHECK(v.mismatch ==
        "the ranks' calls #6 of group 0 differ: ranks 0-1 called all_reduce (f32 x 1000) sum, rank 3 called "
        "all_gather (f32 x 1000)");
  CHECK(v.line ==
        "all_reduce (f32 x 1000) sum #6 of group 0: ranks 0-1,3 entered it 31.2 s ago; none of them has "
        "completed it");
  CHECK(v.notes == std::vector<std::string>{"no flight record from rank 2: it did not answer within 3 s"});
}

TEST_CASE("flight verdict: ranks that completed the same calls part nowhere", "[flight][unit]") {
  const FlightVerdict v = judgeFlights({rank(0, 5, 0), rank(1, 5, 0)});
  CHECK(v.line.empty());
  CHECK(v.mismatch.empty());
  CHECK(v.stuck.empty());
}

TEST_CASE("flight JSON: torch's field names, accel's version, and a rank without a record says why", "[flight][unit]") {
  const RankRecord original = rank(1, 5, 6);
  const auto j = flightJson(original, "job-a", 2);
  CHECK(j.at("version") == kJsonVersion);
  CHECK(j.at("run_id") == "job-a");
  CHECK(j.at("round") == 2);
  CHECK(j.at("rank") == 1);
  CHECK(j.at("pg_config").at("0").at("desc") == "shm rank 1 of 4");
  const auto& e = j.at("entries").back();
  CHECK(e.at("collective_seq_id") == 6);
  CHECK(e.at("profiling_name") == "accel:all_reduce");
  CHECK(e.at("input_dtypes") == nlohmann::json::array({"Float"}));
  CHECK(e.at("input_sizes") == nlohmann::json::parse("[[1000]]"));
  CHECK(e.at("state") == "started");
  CHECK(e.at("retired") == false);
  CHECK(e.at("time_created_ns") == 68'800'001'000);  // on the real-time clock
  const auto missing = flightJson({4, "c", 1, std::nullopt, "host c was lost"}, "job-a", 2);
  CHECK(missing.at("missing") == "host c was lost");
  CHECK_FALSE(missing.contains("entries"));
  // Read back, it judges as the record it came from.
  const RankRecord back = recordFromJson(j);
  REQUIRE(back.flight);
  CHECK(back.flight->dump.calls.size() == original.flight->dump.calls.size());
  CHECK(back.flight->dump.calls.back().kind == kAllReduce);
  CHECK(back.flight->dump.groups.at(0).label == "shm rank 1 of 4");
  CHECK(judgeFlights({back, rank(3, 5, 0)}).line == judgeFlights({original, rank(3, 5, 0)}).line);
  CHECK(recordFromJson(missing).missing == "host c was lost");
  CHECK_THROWS_WITH(recordFromJson(nlohmann::json::parse(R"({"version":"2.10"})")),
                    "not an accel flight record of version accel-1");
  auto broken = j;
  broken["entries"][0].erase("state");
  CHECK_THROWS_WITH(recordFromJson(broken), Catch::StartsWith("not a flight record: "));
}

TEST_CASE("flight from torch: its JSON dump reads as a record the verdict judges like the runtime's",
          "[flight][unit]") {
  // The shape torch 2.15's fr_trace_json gives over Gloo: finished entries stay "scheduled" but
  // retired; the one a rank is blocked in is neither.
  auto entry = [](int seq, const char* op, bool retired) {
    return nlohmann::json{{"collective_seq_id", seq},
                          {"pg_id", 0},
                          {"process_group", {"0", "default_pg"}},
                          {"profiling_name", std::string("gloo:") + op},
                          {"input_sizes", nlohmann::json::parse("[[2, 5]]")},
                          {"input_dtypes", {"Float"}},
                          {"state", "scheduled"},
                          {"retired", retired},
                          {"time_created_ns", 1'000'000'000'000LL + seq},
                          {"time_discovered_started_ns", 0},
                          {"time_discovered_completed_ns", 0}};
  };
  nlohmann::json rank0 = {{"entries", {entry(1, "all_reduce", true), entry(2, "all_reduce", false)}}};
  auto p2p = entry(2, "recv", false);
  p2p["is_p2p"] = true;  // torch gives it the last collective's number: left out
  nlohmann::json rank1 = {{"entries", {entry(1, "all_reduce", true), entry(2, "send", false), p2p}}};
  const int64_t offset = 900'000'000'000LL;  // real-time minus monotonic on the reading machine
  const RankFlight f0 = torchFlight(rank0, 0, 100, 100'000'000'010LL, offset);
  const RankFlight f1 = torchFlight(rank1, 1, 101, 100'000'000'010LL, offset);
  REQUIRE(f0.dump.calls.size() == 2);
  CHECK(f0.dump.calls[0].state == State::Completed);
  CHECK(f0.dump.calls[1].state == State::Scheduled);
  CHECK(f0.dump.calls[1].count == 10);
  CHECK(f0.dump.calls[1].enqueued_ns == 100'000'000'002LL);  // on the monotonic clock
  CHECK(f0.dump.groups.at(0).label == "torch pg 0 (default_pg)");
  CHECK(f1.dump.calls.size() == 2);
  CHECK(f1.dump.calls[1].name == "send");
  CHECK(torchFlight(nlohmann::json::object(), 2, 102, 0, 0).dump.calls.empty());  // no collective yet
  // Through the text that carries it, and judged.
  const RankFlight back = decodeFlight(encodeFlight(f1));
  CHECK(back.dump.calls[1].name == "send");
  const FlightVerdict v = judgeFlights({{0, "a", 100, f0, ""}, {1, "a", 101, back, ""}});
  CHECK(v.mismatch ==
        "the ranks' calls #2 of group 0 differ: rank 0 called all_reduce (f32 x 10), rank 1 called "
        "send (f32 x 10)");
  CHECK_THROWS_WITH(torchFlight(nlohmann::json{{"entries", {{{"pg_id", 0}}}}}, 0, 1, 0, 0),
                    Catch::StartsWith("torch's flight record did not read: "));
  CHECK(missingReason(encodeMissing("it did not answer within 3 s")) == "it did not answer within 3 s");
  CHECK_FALSE(missingReason(encodeFlight(f0)));
}

TEST_CASE("flight verdict: a group some ranks are not in parts nobody", "[flight][unit]") {
  // Ranks 0-1 made group 1 and completed its one call; ranks 2-3 were left out of it
  // (flightSkipGroup: rank -1). Group 0 is where rank 3 never entered #6.
  std::vector<RankRecord> ranks = {rank(0, 5, 6), rank(1, 5, 6), rank(2, 5, 6), rank(3, 5, 0)};
  for (auto& r : ranks) {
    const bool member = r.rank < 2;
    r.flight->dump.groups.push_back({member ? "sub" : "(not a member)", member ? 2 : 0, member ? r.rank : -1});
    if (!member) continue;
    Call c = call(1);
    c.group = 1;
    c.state = State::Completed;
    r.flight->dump.calls.push_back(c);
  }
  const FlightVerdict v = judgeFlights(ranks);
  CHECK_THAT(v.line, Catch::Contains("#6 of group 0: ranks 0-2 entered it"));
  CHECK(v.stuck == std::vector<int>{3});
}
