// SPDX-License-Identifier: Apache-2.0
// `accel stacks` on a real job: 4 runtime_worker ranks of one launcher, rank 0 stopped inside its
// loop of all_reduces (SIGSTOP) and ranks 1 to 3 waiting for it in the next one. Asked of the
// launcher, which reads them through gdb: each rank's stack in full and a summary line, rank 0 in
// `freeze` with the last collective it finished, the others in shared memory's wait inside #6
// all_reduce (libaccel_runtime's accel_collective_now). A launcher without gdb or eu-stack says,
// for each rank, what to install, at once. A pid that is no launcher and an unknown run id are
// usage errors.
// And before a stop: a job whose rank 1 spins outside any collective is stopped by --hang_timeout
// (or by rank 0's collective timeout) only after every rank's stack is read, the summary naming
// rank 1's loop and rank 0's all_reduce, the stacks kept in full; a silent job whose collectives
// go on is not hung. Python workers (py-spy) are checked with the peers' torch:
// tests/peers/check_stacks.py; several machines in the namespace cluster (diagnosis_cases.sh).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/atomic_file.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"

using namespace accel::test;
using accel::readFile;

namespace {

// A launcher of 4 ranks, rank 0 frozen after its fifth all_reduce; its pid names the job.
struct FrozenJob {
  TempDir dir;
  BackgroundProcess launcher;
  explicit FrozenJob(std::map<std::string, std::string> env = {})
      : launcher({accelBinary(), "launch", "--cpu", "--num_processes", "4", "--main_process_port", "0",
                  "--collective_timeout", "120", "--grace_period", "2", runtimeWorker(), "freeze", "0"},
                 hermeticEnv(dir, std::move(env))) {
    REQUIRE(launcher.waitForOutput("reducing", 4));
    ::usleep(1500 * 1000);  // the five all_reduces take milliseconds: rank 0 has stopped
  }
  ~FrozenJob() {
    launcher.signal(SIGTERM);  // the launcher continues and stops its frozen rank too
    launcher.wait(30000);
  }
  std::string pid() const { return std::to_string(launcher.pid()); }
};

RunResult stacks(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv = {accelBinary(), "stacks"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, env, 90000);
}

}  // namespace

TEST_CASE("stacks: every rank's stack and where it waits, read through gdb", "[stacks]") {
  if (::access("/usr/bin/gdb", X_OK) != 0) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL("gdb is not installed (scripts/test installs it)");
    accel::test::skip("gdb is not installed (scripts/test installs it)");
    return;
  }
  FrozenJob job;
  auto r = stacks({job.pid(), "--timeout", "60"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, fmt::format("launcher pid {}, 4 rank(s) on this machine", job.pid())));
  for (int rank = 0; rank < 4; ++rank) CHECK(contains(r.out, fmt::format("== rank {} (pid ", rank)));
  CHECK(contains(r.out, "rank 0 (pid "));
  CHECK(contains(r.out, "): freeze ("));
  CHECK(contains(r.out, "after #5 all_reduce (f32 x 1000) sum, shm rank 0 of 4"));
  for (int rank = 1; rank < 4; ++rank) {
    CHECK(contains(r.out, fmt::format("in #6 all_reduce (f32 x 1000) sum, shm rank {} of 4", rank)));
  }
}

TEST_CASE("stacks: without gdb or eu-stack each rank says what to install, at once", "[stacks]") {
  FrozenJob job(std::map<std::string, std::string>{{"PATH", "/nonexistent"}});  // the launcher reads them
  auto r = stacks({job.pid()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(occurrences(r.out, "): no stack: neither gdb nor eu-stack is installed: `apt-get install gdb` (or elfutils)") ==
        4);
  // `accel fr` asks the same launcher: the flight records come with the stacks, tools or none.
  auto fr = run({accelBinary(), "fr", job.pid()}, {}, {}, 90000);
  INFO(fr.out << fr.err);
  CHECK(fr.exit_code == 0);
  CHECK(contains(fr.out, fmt::format("accel fr: 4 rank(s), run ")));
  CHECK(contains(fr.out, "all_reduce (f32 x 1000) sum #6 of group 0: ranks 1-3 entered it "));
  CHECK(std::regex_search(
      fr.out, std::regex(R"(rank 0 \(host \S+, pid \d+\) never did: its last was all_reduce \(f32 x 1000\) sum #5)")));
  CHECK(std::regex_search(
      fr.out,
      std::regex(
          R"(rank 2 \(host \S+, pid \d+\): 6 calls seen; completed #5 all_reduce \(f32 x 1000\) sum; started #6 all_reduce)")));
}

TEST_CASE("stacks: a pid that is no launcher, or an unknown run id, is a usage error", "[stacks]") {
  auto self = stacks({std::to_string(::getpid())});
  INFO(self.err);
  CHECK(self.exit_code == 2);
  CHECK(contains(self.err, fmt::format("accel: error: process {} is not the launcher of a running job", ::getpid())));
  auto unknown = stacks({"accel-0000000000000000"});
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.err, "accel: error: no running job has run id 'accel-0000000000000000'"));
}

namespace {

bool haveGdb() {
  if (::access("/usr/bin/gdb", X_OK) == 0) return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("gdb is not installed (scripts/test installs it)");
  accel::test::skip("gdb is not installed (scripts/test installs it)");
  return false;
}

// A 2-rank job whose rank 1 spins outside any collective after five all_reduces, rank 0 waiting
// for it; `extra` flags before the program. Returns the launch's result and its seconds from the
// workers' first words to the launcher's exit.
struct Stopped {
  RunResult r;
  double seconds = 0;
  std::string kept;                       // what the file the summary names holds (it goes with the test's TMPDIR)
  std::map<int, nlohmann::json> flights;  // each rank's flight record file, by rank
};

// The flight verdict's lines: rank 0 in all_reduce #6, rank 1 never, its last #5.
void checkFlightVerdict(const Stopped& s) {
  CHECK(contains(s.r.err, "where the ranks part (their flight records; records: "));
  CHECK(contains(s.r.err, "all_reduce (f32 x 1000) sum #6 of group 0: rank 0 entered it "));
  CHECK(std::regex_search(
      s.r.err, std::regex(R"(rank 1 \(host \S+, pid \d+\) never did: its last was all_reduce \(f32 x 1000\) sum #5)")));
  REQUIRE(s.flights.size() == 2);
  for (const auto& [rank, j] : s.flights) {
    CHECK(j.at("version") == "accel-1");
    CHECK(j.at("rank") == rank);
    const auto& entries = j.at("entries");
    const bool in_six = std::any_of(entries.begin(), entries.end(), [](const auto& e) {
      return e.at("collective_seq_id") == 6 && e.at("profiling_name") == "accel:all_reduce";
    });
    CHECK(in_six == (rank == 0));  // rank 0 entered #6 (and after a timeout, its final barrier failed too)
    if (rank == 1) CHECK(entries.back().at("collective_seq_id") == 5);
  }
}

Stopped spinningJob(const std::vector<std::string>& extra, std::map<std::string, std::string> env = {}) {
  TempDir dir;
  std::vector<std::string> argv = {
      accelBinary(), "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0", "--grace_period", "2"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {runtimeWorker(), "spin", "1"});
  BackgroundProcess job(argv, hermeticEnv(dir, std::move(env)));
  REQUIRE(job.waitForOutput("reducing", 2));
  const auto start = std::chrono::steady_clock::now();
  Stopped s;
  s.r = job.wait(60000);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::smatch m;
  if (std::regex_search(s.r.err, m, std::regex("in full: (\\S+)\\)")) && contains(m[1], dir.path())) {
    s.kept = readFile(m[1]);
  }
  if (std::regex_search(s.r.err, m, std::regex("records: (\\S+)\\)")) && contains(m[1], dir.path())) {
    for (int rank : {0, 1}) {
      const std::string path = fmt::format("{}/rank_{}.json", m[1].str(), rank);
      if (::access(path.c_str(), R_OK) == 0) s.flights[rank] = nlohmann::json::parse(readFile(path));
    }
  }
  return s;
}

}  // namespace

TEST_CASE("stacks: --hang_timeout reads every rank's stack, then stops the job", "[stacks][failure]") {
  if (!haveGdb()) return;
  const Stopped s = spinningJob({"--hang_timeout", "3", "--collective_timeout", "120"});
  INFO(s.r.out << s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(contains(s.r.err, "error: no rank made progress for 3 s (--hang_timeout"));
  CHECK(contains(s.r.err, "where each rank was before the stop (stacks read in "));
  CHECK(std::regex_search(s.r.err, std::regex(R"(rank 1 \(pid \d+\): spin \(\S*runtime_worker.cc:\d+\))")));
  CHECK(std::regex_search(s.r.err, std::regex(R"(rank 0 \(pid \d+\): .*in #6 all_reduce \(f32 x 1000\) sum)")));
  // The hang is seen 3 s after the last word; the stacks take at most their 4 s; the stop its 2.
  CHECK(s.seconds >= 2.9);
  CHECK(s.seconds < 3 + 4 + 1.5 + 2 + 3);
  CHECK(contains(s.kept, "# no rank made progress for 3 s"));
  CHECK(contains(s.kept, "== rank 0 (pid "));
  CHECK(contains(s.kept, "== rank 1 (pid "));
  CHECK(contains(s.kept, "accel collective: in #6 all_reduce"));
  checkFlightVerdict(s);
}

TEST_CASE("stacks: a collective's timeout reads the other ranks' stacks before they are stopped", "[stacks][failure]") {
  if (!haveGdb()) return;
  const Stopped s = spinningJob({"--collective_timeout", "3"});
  INFO(s.r.out << s.r.err);
  CHECK(s.r.exit_code == 3);  // rank 0's own code, as for any failure
  CHECK(contains(s.r.err, "rank 0 (pid "));
  CHECK(contains(s.r.err, "where each rank was before the stop"));
  CHECK(std::regex_search(s.r.err, std::regex(R"(rank 1 \(pid \d+\): spin \(\S*runtime_worker.cc:\d+\))")));
  CHECK(s.seconds < 3 + 4 + 1.5 + 2 + 5);
  checkFlightVerdict(s);  // rank 0's record too, read after it ended
}

TEST_CASE("stacks: without gdb the hang is still stopped on time, each rank saying what to install",
          "[stacks][failure]") {
  const Stopped s = spinningJob({"--hang_timeout", "2", "--collective_timeout", "120"}, {{"PATH", "/nonexistent"}});
  INFO(s.r.out << s.r.err);
  CHECK(s.r.exit_code == 1);
  CHECK(occurrences(s.r.err, "no stack: neither gdb nor eu-stack is installed: `apt-get install gdb`") == 2);
  CHECK(s.seconds < 2 + 1 + 2 + 3);  // no tool to wait for
}

TEST_CASE("stacks: a job whose collectives go on without a word is not hung", "[stacks]") {
  TempDir dir;
  auto r = run({accelBinary(), "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0", "--hang_timeout",
                "1.5", runtimeWorker(), "quiet", "5"},
               {}, hermeticEnv(dir), 60000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.err, "no rank made progress"));
}

TEST_CASE("stacks: bad --hang_timeout and ACCEL_STACKS_TIMEOUT values are usage errors", "[stacks]") {
  TempDir dir;
  auto bad = run({accelBinary(), "launch", "--cpu", "--hang_timeout", "soon", runtimeWorker(), "quiet", "1"}, {},
                 hermeticEnv(dir));
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--hang_timeout"));
  auto negative = run({accelBinary(), "launch", "--cpu", runtimeWorker(), "quiet", "1"}, {},
                      hermeticEnv(dir, {{"ACCEL_STACKS_TIMEOUT", "-1"}}));
  CHECK(negative.exit_code == 2);
  CHECK(contains(negative.err, "ACCEL_STACKS_TIMEOUT='-1' is not a number of seconds (0 for off)"));
  auto stacks_timeout = run({accelBinary(), "stacks", "--timeout", "0"}, {}, hermeticEnv(dir));
  CHECK(stacks_timeout.exit_code == 2);
}

TEST_CASE("stacks: time the job spends stopped (Ctrl-Z) is no hang", "[stacks]") {
  TempDir dir;
  // A line a second: never 3 s without progress, but for the 4 s it is stopped.
  const std::string ticker =
      dir.write("ticker.sh", "#!/bin/sh\nfor i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done\n");
  ::chmod(ticker.c_str(), 0755);
  BackgroundProcess job({accelBinary(), "launch", "--cpu", "--num_processes", "2", "--hang_timeout", "3", ticker},
                        hermeticEnv(dir));
  REQUIRE(job.waitForOutput("tick 2", 2));
  job.signal(SIGTSTP);  // as the terminal's Ctrl-Z: the launcher stops its workers and itself
  ::usleep(4000 * 1000);
  job.signal(SIGCONT);  // as `fg`
  auto r = job.wait(30000);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(occurrences(r.out, "tick 6") == 2);
  CHECK_FALSE(contains(r.err, "no rank made progress"));
}
