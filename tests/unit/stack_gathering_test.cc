// SPDX-License-Identifier: Apache-2.0
// Every rank's stack across machines, the pure parts (lib/launch/job/): a gathering's bookkeeping (machines owed, parts
// joined, deadline, lost machines), the relay to the machine that asked, --hang_timeout's watch, what reads like a
// collective's timeout, and the collecting process's encoding. Milliseconds each, but the deadline cases.
#include <catch2/catch.hpp>

#include <thread>

#include "lib/launch/job/hang_watch.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/job/job_round.h"
#include "lib/launch/job/stack_gatherings.h"
#include "lib/launch/stacks/stack_collector.h"

using namespace accel;
using namespace accel::launch::job;
using namespace accel::launch::stacks;
using namespace std::chrono_literals;
namespace job = accel::launch::job;

namespace {

RankStack stack(int rank, std::string text, std::string summary = "spin (train.py:4)") {
  RankStack s;
  s.rank = rank;
  s.pid = 100 + rank;
  s.tool = "py-spy";
  s.text = std::move(text);
  s.summary = std::move(summary);
  return s;
}

// A part as the other machine reads it off the channel.
job::StackPart received(const job::StackPart& sent) {
  std::string error;
  auto back = job::decode(job::encode(sent), error);
  INFO(error);
  REQUIRE(back);
  return std::get<job::StackPart>(*back);
}

}  // namespace

TEST_CASE("stack gathering: a long stack travels in parts and comes back whole", "[job][unit]") {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "#" + std::to_string(i) + " frame é\n";  // multi-byte characters too
  RankStack s = stack(3, text);
  s.machine = 1;
  const auto parts = stackParts(9, s);
  CHECK(parts.size() > 1);
  StackGatherings g;
  const long long id = g.start({{0, "h0"}, {1, "h1"}}, 10s, 0, 0, "");
  for (const auto& p : parts) {
    auto back = received(p);  // each part fits the channel's bounds
    CHECK(back.text.size() <= job::kMaxText);
    g.part(id, 1, stackPiece(back));
  }
  g.done(id, 1);
  CHECK(g.finished().empty());  // machine 0 has not answered
  g.part(id, 0, stack(0, "#0 main\n"));
  g.done(id, 0);
  auto done = g.finished();
  REQUIRE(done.size() == 1);
  REQUIRE(done[0].stacks.ranks.size() == 2);
  CHECK(done[0].stacks.ranks[0].rank == 0);  // by rank
  CHECK(done[0].stacks.ranks[1].text == text);
  CHECK(done[0].stacks.ranks[1].machine == 1);
  CHECK(done[0].stacks.notes.empty());
}

TEST_CASE("stack gathering: a machine that says nothing is named at the deadline, a lost one at once", "[job][unit]") {
  StackGatherings g;
  const long long id = g.start({{0, "h0"}, {1, "h1"}, {2, "h2"}}, 200ms, 0, 0, "no rank made progress");
  CHECK(g.stopping());
  g.part(id, 0, stack(0, "#0 main\n"));
  g.done(id, 0);
  g.lost(2);
  CHECK(g.finished().empty());
  CHECK(g.timeoutMs() > 0);
  std::this_thread::sleep_for(250ms);
  auto done = g.finished();
  REQUIRE(done.size() == 1);
  CHECK(done[0].stacks.why == "no rank made progress");
  CHECK(done[0].stacks.machines == 3);
  CHECK(done[0].stacks.notes == std::vector<std::string>{"machine 2 (h2) was lost before it sent its stacks",
                                                         "machine 1 (h1) sent no stacks within 0.2 s"});
  CHECK_FALSE(g.stopping());
  g.part(id, 1, stack(2, "late"));  // after the end: dropped
  CHECK(g.timeoutMs() == -1);
}

TEST_CASE("stack gathering: a rank's stack is cut at its bound, once", "[job][unit]") {
  StackGatherings g;
  const long long id = g.start({{0, "h0"}}, 10s, 0, 0, "");
  const std::string piece(job::kMaxText - 8, 'x');
  for (size_t sent = 0; sent < kMaxStackText + 5 * piece.size(); sent += piece.size()) {
    g.part(id, 0, stack(0, piece));
  }
  g.done(id, 0);
  const std::string text = g.finished().at(0).stacks.ranks.at(0).text;
  CHECK(text.size() < kMaxStackText + 64);
  CHECK(text.find("... (cut)") == text.rfind("... (cut)"));
}

TEST_CASE("stack relay: machine 0's parts become the job's stacks on the machine that asked", "[job][unit]") {
  RelayedStacks r;
  RankStack a = stack(0, "#0 main\n");
  RankStack b = stack(1, std::string(job::kMaxText * 2, 'y'));
  b.machine = 1;
  for (const auto* s : {&a, &b}) {
    for (const auto& p : stackParts(5, *s)) r.part(p);
  }
  GatheredStacks g = r.done({5, -1, "machine 2 (h2) sent no stacks within 5.5 s; machine 3 (h3) was lost"});
  REQUIRE(g.ranks.size() == 2);
  CHECK(g.ranks[1].text == b.text);
  CHECK(g.machines == 2);
  CHECK(g.notes.size() == 2);
}

TEST_CASE("hang watch: overdue after the timeout without progress, never while held, once a round", "[job][unit]") {
  HangWatch off(0);
  CHECK_FALSE(off.overdue());
  CHECK(off.timeoutMs() == -1);
  HangWatch w(0.1);
  CHECK_FALSE(w.overdue());
  std::this_thread::sleep_for(120ms);
  CHECK(w.overdue());
  w.progress();
  CHECK_FALSE(w.overdue());
  w.hold(true);
  std::this_thread::sleep_for(120ms);
  CHECK_FALSE(w.overdue());  // Ctrl-Z: the stop does not count
  CHECK(w.timeoutMs() == -1);
  w.hold(false);
  CHECK_FALSE(w.overdue());
  std::this_thread::sleep_for(120ms);
  CHECK(w.overdue());
  w.fire();
  CHECK_FALSE(w.overdue());
  w.restart();
  std::this_thread::sleep_for(120ms);
  CHECK(w.overdue());
}

TEST_CASE("collective timeouts: the runtime's, Gloo's and NCCL's words, not any failure", "[job][unit]") {
  WorkerFailure f;
  f.tail = {"error after 3.0 s: all_reduce #6: rank 1 did not arrive within 3 s: alive, in state S"};
  CHECK(timedOutInCollective(f));
  f.tail = {
      "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
      "1800000ms for recv operation to complete"};
  CHECK(timedOutInCollective(f));
  f.tail = {};
  f.raised = "DistBackendError: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE)";
  CHECK(timedOutInCollective(f));
  f.raised = "ValueError: bad batch";
  f.tail = {"Traceback (most recent call last):", "ValueError: bad batch"};
  CHECK_FALSE(timedOutInCollective(f));
}

TEST_CASE("stack collector encoding: what the collecting process writes reads back the same", "[job][unit]") {
  GatheredStacks g;
  g.why = "machine 1 was lost";
  g.ranks = {stack(0, "#0 main\n\"quoted\"\n"), stack(1, "", "")};
  g.ranks[1].problem = "py-spy is not installed: `pip install py-spy`";
  g.notes = {"machine 2 (h2) sent no stacks within 5.5 s"};
  g.seconds = 1.25;
  g.machines = 3;
  auto back = decodeStacks(encodeStacks(g));
  REQUIRE(back);
  CHECK(back->why == g.why);
  CHECK(back->ranks[0].text == g.ranks[0].text);
  CHECK(back->ranks[1].problem == g.ranks[1].problem);
  CHECK(back->notes == g.notes);
  CHECK(back->machines == 3);
  CHECK_FALSE(decodeStacks("not json"));
  CHECK_FALSE(decodeStacks(R"({"why":""})"));
}
