// SPDX-License-Identifier: Apache-2.0
// `accel stacks` on a real job: 4 runtime_worker ranks of one launcher, rank 0 stopped inside its
// loop of all_reduces (SIGSTOP) and ranks 1 to 3 waiting for it in the next one. Through gdb, each
// rank's stack in full and a summary line: rank 0 in `freeze` with the last collective it finished,
// the others in shared memory's wait inside #6 all_reduce (libaccel_runtime's
// accel_collective_now). Without gdb or eu-stack each rank says what to install, at once. A pid
// that is no launcher and an unknown run id are usage errors. Python workers (py-spy) are checked
// with the peers' torch: tests/peers/check_stacks.py.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

// A launcher of 4 ranks, rank 0 frozen after its fifth all_reduce; its pid names the job.
struct FrozenJob {
  TempDir dir;
  BackgroundProcess launcher{{accelBinary(), "launch", "--cpu", "--num_processes", "4", "--collective_timeout", "120",
                              "--grace_period", "2", runtimeWorker(), "freeze", "0"},
                             hermeticEnv(dir)};
  FrozenJob() {
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
    WARN("skipped: gdb is not installed (scripts/test installs it)");
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
  FrozenJob job;
  auto r = stacks({job.pid()}, {{"PATH", "/nonexistent"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(occurrences(r.out, "): no stack: neither gdb nor eu-stack is installed: `apt-get install gdb` (or elfutils)") ==
        4);
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
