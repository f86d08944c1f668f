// SPDX-License-Identifier: Apache-2.0
// The round's pure logic (lib/launch/job/job_round.h): which failure is the job's first, and
// whether the job restarts or ends, with which code.
#include <catch2/catch.hpp>

#include "lib/launch/job/job_round.h"

using namespace accel;
using namespace accel::launch::job;

namespace {

WorkerFailure failure(int machine, int rank, int code, bool killed_from_outside = false) {
  WorkerFailure f;
  f.machine = machine;
  f.rank = rank;
  f.who = "rank " + std::to_string(rank);
  f.host = "h" + std::to_string(machine);
  f.exit_code = code;
  f.exit_text = killed_from_outside ? "was killed by signal SIGKILL" : "exited with code " + std::to_string(code);
  f.killed_from_outside = killed_from_outside;
  return f;
}

RoundOutcome outcome(const FailureLedger& failures, bool all_succeeded = false, int signal = 0, std::string lost = {}) {
  RoundOutcome o;
  o.all_succeeded = all_succeeded;
  o.signal = signal;
  o.lost = std::move(lost);
  if (!o.lost.empty()) o.lost_hint = "check it";
  o.failures = &failures;
  return o;
}

}  // namespace

TEST_CASE("failure ledger: the earliest report is the job's first", "[unit][job]") {
  FailureLedger ledger;
  CHECK(ledger.empty());
  ledger.add(failure(1, 3, 7), false, 1.0);
  ledger.add(failure(0, 0, 9), false, 1.2);
  CHECK_FALSE(ledger.empty());
  CHECK(ledger.first().rank == 3);
  ledger.clear();
  CHECK(ledger.empty());
}

TEST_CASE("failure ledger: a rank killed from outside within the window is named first", "[unit][job]") {
  // Its sockets close before its death is seen, so the peer it broke can be reported first.
  FailureLedger within;
  within.add(failure(0, 1, 1), false, 2.0);
  within.add(failure(1, 2, 137, true), false, 2.0 + kKilledFirstWindow - 0.01);
  CHECK(within.first().rank == 2);

  FailureLedger after;  // past the window: the earliest stays first
  after.add(failure(0, 1, 1), false, 2.0);
  after.add(failure(1, 2, 137, true), false, 2.0 + kKilledFirstWindow + 0.01);
  CHECK(after.first().rank == 1);

  FailureLedger killed_first;  // the earliest itself was killed: nothing to prefer
  killed_first.add(failure(0, 1, 137, true), false, 2.0);
  killed_first.add(failure(1, 2, 137, true), false, 2.1);
  CHECK(killed_first.first().rank == 1);
}

TEST_CASE("failure ledger: a report that replaces keeps its machine's place", "[unit][job]") {
  FailureLedger ledger;
  ledger.add(failure(1, 3, 7), false, 1.0);
  ledger.add(failure(0, 0, 9), false, 1.1);
  ledger.add(failure(1, 4, 5), true, 1.5);  // machine 1's fuller report
  CHECK(ledger.first().rank == 4);
  CHECK(ledger.first().exit_code == 5);
}

// decideRound on one machine (the restarts are the rounds), with the default policy.
JobEvent decideAlone(int round, int max_restarts, const RoundOutcome& o) {
  RestartPolicy policy{RestartRules{}};
  return decideRound(round, round, max_restarts, o, policy);
}

TEST_CASE("decideRound: success, interrupt, lost machine, restart and the last round", "[unit][job]") {
  FailureLedger none, one;
  one.add(failure(1, 3, 7), false, 1.0);

  const JobEvent ok = decideAlone(0, 2, outcome(none, true));
  CHECK(ok.kind == JobEvent::Kind::End);
  CHECK(ok.exit_code == 0);

  const JobEvent interrupted = decideAlone(0, 2, outcome(one, false, 2));
  CHECK(interrupted.kind == JobEvent::Kind::End);
  CHECK(interrupted.exit_code == 130);  // an interrupt wins over a failure and a restart left
  CHECK(interrupted.signal == 2);

  const JobEvent lost = decideAlone(0, 2, outcome(one, false, 0, "machine 1 was lost"));
  CHECK(lost.kind == JobEvent::Kind::End);  // a lost machine cannot restart
  CHECK(lost.exit_code == 1);
  CHECK(lost.message == "machine 1 was lost");
  CHECK(lost.hint == "check it");

  const JobEvent restart = decideAlone(1, 2, outcome(one));
  CHECK(restart.kind == JobEvent::Kind::Restart);
  CHECK(restart.round == 2);
  REQUIRE(restart.failure);
  CHECK(restart.failure->rank == 3);

  const JobEvent last = decideAlone(2, 2, outcome(one));
  CHECK(last.kind == JobEvent::Kind::End);
  CHECK(last.exit_code == 7);  // the failed worker's own code
}

TEST_CASE("restart policy: hangs restart or end, start-up failures in a row end, a machine failing again leaves",
          "[unit][job]") {
  FailureLedger none, early;
  early.add(failure(1, 3, 7), false, 1.0);
  RoundOutcome hang = outcome(none);
  hang.hang = "no rank made progress for 5 s";
  hang.seconds = 50;
  RestartPolicy policy{RestartRules{}};
  const JobEvent restarted = decideRound(0, 0, 2, hang, policy);
  CHECK(restarted.kind == JobEvent::Kind::Restart);
  CHECK(restarted.restarts == 1);
  CHECK(restarted.message == "no rank made progress for 5 s: restarting all workers (restart 1 of 2)");
  RestartPolicy ends{RestartRules{false, 30, 3, 3}};
  const JobEvent ended = decideRound(0, 0, 2, hang, ends);
  CHECK(ended.kind == JobEvent::Kind::End);
  CHECK(ended.message == "no rank made progress for 5 s");
  CHECK(ended.hint == "the job hung, and --on_hang end ends it");
  RoundOutcome quick = outcome(early);
  quick.seconds = 1;
  RestartPolicy startup{RestartRules{true, 30, 2, 3}};
  CHECK(decideRound(0, 0, 9, quick, startup).kind == JobEvent::Kind::Restart);
  const JobEvent second = decideRound(1, 1, 9, quick, startup);
  CHECK(second.kind == JobEvent::Kind::End);
  CHECK(second.exit_code == 7);
  CHECK(second.message.rfind("2 rounds in a row failed within 30 s of their start", 0) == 0);
  RoundOutcome late = quick;
  late.seconds = 31;  // a failure after the start-up window breaks the streak
  RestartPolicy streak{RestartRules{true, 30, 2, 3}};
  CHECK(decideRound(0, 0, 9, quick, streak).kind == JobEvent::Kind::Restart);
  CHECK(decideRound(1, 1, 9, late, streak).kind == JobEvent::Kind::Restart);
  CHECK(decideRound(2, 2, 9, quick, streak).kind == JobEvent::Kind::Restart);
  RestartPolicy machines{RestartRules{true, 30, 3, 2}};
  CHECK_FALSE(machines.failedAgain("b pid 7"));
  CHECK_FALSE(machines.failedAgain("c pid 8"));  // another machine: the streak starts again
  CHECK(machines.failedAgain("c pid 8"));
  CHECK(machines.leaveReason() == "its workers failed first in 2 rounds in a row (--max_machine_failures 2)");
}

TEST_CASE("decideRound: stopped workers with no failure reported never end in 0", "[unit][job]") {
  FailureLedger none;
  const JobEvent e = decideAlone(0, 0, outcome(none));
  CHECK(e.kind == JobEvent::Kind::End);
  CHECK(e.exit_code == 1);
  CHECK(e.message.find("no failure reported") != std::string::npos);
}
