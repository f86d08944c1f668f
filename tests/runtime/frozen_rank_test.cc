// SPDX-License-Identifier: Apache-2.0
// A rank that stops (SIGSTOP) inside the loop of all_reduces is named by the others within the
// collective timeout plus a second or two, with evidence of what it is doing: over shared
// memory from its pidfd and /proc, over Gloo from the store it hosts falling silent and from
// the launcher (lib/launch/supervise/rank_questions.h), also when the frozen rank is on another machine
// (two launchers, emulated hosts). Never "probably exited" without evidence. The launcher then
// stops the frozen rank at once: SIGCONT follows its SIGTERM. Real workers, real launchers.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <regex>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

using Clock = std::chrono::steady_clock;

// The issue's window: the 5 s timeout plus at most 2 s of post-mortem questions. Sanitizer runs
// (ACCEL_TEST_QUICK) wait 2 s, not 5, and may take 5 s more: they check what is said, and that
// it comes at the timeout and not at twice it.
bool quick() { return std::getenv("ACCEL_TEST_QUICK") != nullptr; }
int timeout() { return quick() ? 2 : 5; }
double latest() { return timeout() + (quick() ? 5.0 : 2.0); }

std::vector<std::string> frozenCommand(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {
      accelBinary(), "launch", "--cpu", "--collective_timeout", std::to_string(timeout()), "--grace_period", "30"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {runtimeWorker(), "freeze", "0"});
  return argv;
}

struct Failure {
  double seconds = -1;
  std::string text;
};

// Rank `rank`'s "error after T s: …" line in `output`.
Failure failureOf(const std::string& output, int rank) {
  const std::regex line("rank " + std::to_string(rank) + R"(\] error after ([0-9.e-]+) s: ([^\n]*))");
  std::smatch m;
  if (!std::regex_search(output, m, line)) return {};
  return {std::stod(m[1]), m[2]};
}

// Named within the window, with `evidence` (the frozen rank's state, or the store's silence).
void checkNamed(const Failure& f, const std::string& evidence) {
  REQUIRE(f.seconds >= 0);
  CHECK(f.seconds >= timeout() - 0.1);
  CHECK(f.seconds < latest());
  CHECK(contains(f.text, evidence));
  CHECK_FALSE(contains(f.text, "probably"));
}

const std::string kStopped = "alive but stopped (state T: SIGSTOP or Ctrl-Z), so not progressing";

void checkNamedInTime(const std::string& output, int rank) {
  INFO("rank " << rank);
  const Failure f = failureOf(output, rank);
  checkNamed(f, kStopped);
  CHECK(contains(f.text, "rank 0 (pid "));
}

}  // namespace

TEST_CASE("frozen rank: a SIGSTOPped rank 0 is named at the timeout as alive but not progressing",
          "[failure][runtime][comm]") {
  const std::string shm = GENERATE("1", "0");
  INFO("over " << (shm == "1" ? "shared memory" : "Gloo"));
  TempDir dir;
  const auto start = Clock::now();
  auto r = run(frozenCommand({"--num_processes", "3", "--main_process_port", "0"}), {},
               hermeticEnv(dir, {{"ACCEL_SHM", shm}, {"GLOO_SOCKET_IFNAME", "lo"}}), 120000);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  // Ranks 1 and 2 time out together; the first to fail is named in the summary, and the
  // launcher may stop the other before it has printed its own error.
  const int first = failureOf(r.err, 1).seconds >= 0 ? 1 : 2;
  checkNamedInTime(r.err, first);
  if (failureOf(r.err, 3 - first).seconds >= 0) checkNamedInTime(r.err, 3 - first);
  CHECK(
      contains(r.err, shm == "1" ? "waited for it over shared memory" : "the store that rank 0 hosts did not answer"));
  // The launcher's SIGTERM reached the stopped rank with a SIGCONT: not the 30 s grace period.
  CHECK(took < latest() + 10);
  CHECK(contains(r.err, "stopped ranks 0"));
}

TEST_CASE("frozen rank: started without a launcher, ranks name a frozen rank 0 from what they can see",
          "[failure][runtime][comm]") {
  const std::string shm = GENERATE("1", "0");
  INFO("over " << (shm == "1" ? "shared memory" : "Gloo"));
  TempDir dir;
  const std::string port = std::to_string(freeLoopbackPort());
  std::vector<std::unique_ptr<BackgroundProcess>> ranks;
  for (int r = 0; r < 3; ++r) {
    auto env = rankEnv(r, 3, port, "frozen-test",
                       {{"ACCEL_COLLECTIVE_TIMEOUT", std::to_string(timeout())}, {"ACCEL_SHM", shm}});
    ranks.push_back(std::make_unique<BackgroundProcess>(std::vector<std::string>{runtimeWorker(), "freeze", "0"},
                                                        hermeticEnv(dir, env)));
  }
  for (int r = 1; r < 3; ++r) {
    auto res = ranks[static_cast<size_t>(r)]->wait(60000);
    INFO("rank " << r << ": " << res.err);
    CHECK(res.exit_code == 3);
    checkNamed(failureOf("rank " + std::to_string(r) + "] " + res.err, r),
               shm == "1" ? kStopped
                          : "the store that rank 0 hosts did not answer within 0.75 s either: rank 0's process is not "
                            "running (stopped?) or its machine cannot be reached");
  }
  ranks[0]->signal(SIGKILL);
  ranks[0]->signal(SIGCONT);
}

TEST_CASE("frozen rank: on another machine, its launcher's report names it", "[failure][runtime][comm][machines]") {
  TempDir dir;
  const std::string port = std::to_string(freeLoopbackPort()), job_port = std::to_string(freeLoopbackPort());
  auto machine = [&](int k) {
    // One rank a machine: rank 1 (machine 1) waits for rank 0 over Gloo, and nothing else fails first.
    return frozenCommand({"--num_machines", "2", "--machine_rank", std::to_string(k), "--num_processes", "2",
                          "--main_process_ip", "127.0.0.1", "--main_process_port", port, "--job_port", job_port});
  };
  auto on = [&](const char* host) { return hermeticEnv(dir, {{"ACCEL_HOST_ID", host}, {"GLOO_SOCKET_IFNAME", "lo"}}); };
  BackgroundProcess m0(machine(0), on("machine-a"));
  auto r1 = run(machine(1), {}, on("machine-b"), 120000);
  auto r0 = m0.wait(120000);
  INFO(r0.out << r0.err << "\n---\n" << r1.out << r1.err);
  CHECK(r1.exit_code == 3);
  const Failure f = failureOf(r1.err, 1);
  checkNamed(f, kStopped);
  CHECK(contains(f.text, "rank 0 (pid "));
  CHECK(contains(f.text, ") on machine 0 ("));
}
