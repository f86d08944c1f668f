// SPDX-License-Identifier: Apache-2.0
// accel launch --mpirun_hostfile: a real Open MPI mpirun (Debian's openmpi-bin, installed by
// scripts/test) starts the ranks, accel supervises it. Skipped with the reason where mpirun is
// missing, except under CI=true, where that fails.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "lib/launch/facts/program.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"

using namespace accel::test;

namespace {

bool haveMpirun() {
  if (!accel::launch::facts::findExecutable("mpirun", std::getenv("PATH") ? std::getenv("PATH") : "").empty())
    return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("mpirun is not installed (scripts/test installs openmpi-bin)");
  accel::test::skip("mpirun is not installed (scripts/test installs openmpi-bin)");
  return false;
}

std::vector<std::string> launchArgs(const TempDir& dir, std::vector<std::string> program) {
  { std::ofstream(dir.file("hostfile")) << "localhost slots=2\n"; }
  std::vector<std::string> argv = {accelBinary(),         "launch", "--cpu", "--num_processes", "2",
                                   "--main_process_port", "0"};
  argv.insert(argv.end(), {"--mpirun_hostfile", dir.file("hostfile")});
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::string crcLine(const std::string& out) {
  auto at = out.find("weights crc32 ");
  return at == std::string::npos ? "(none)" : out.substr(at, 22);
}

}  // namespace

TEST_CASE("mpirun: ranks started by mpirun train to the same weights as accel's own workers", "[launch][mpirun]") {
  if (!haveMpirun()) return;
  TempDir dir;
  const std::vector<std::string> train = {accelTrain(), "--steps", "30", "--log_every", "0"};
  auto through_mpirun = run(launchArgs(dir, train), {}, hermeticEnv(dir), 120000);
  INFO(through_mpirun.out << through_mpirun.err);
  REQUIRE(through_mpirun.exit_code == 0);
  CHECK(contains(through_mpirun.out, "[mpirun] test accuracy"));
  CHECK(contains(through_mpirun.out, "(2 processes on cpu"));  // ranks from OMPI_COMM_WORLD_*
  std::vector<std::string> plain = {accelBinary(),         "launch", "--cpu", "--num_processes", "2",
                                    "--main_process_port", "0"};
  plain.insert(plain.end(), train.begin(), train.end());
  auto own = run(plain, {}, hermeticEnv(dir), 120000);
  REQUIRE(own.exit_code == 0);
  CHECK(crcLine(through_mpirun.out) == crcLine(own.out));
}

TEST_CASE("mpirun: a failing rank's exit code passes through, and Ctrl-C leaves no rank behind",
          "[launch][mpirun][failure]") {
  if (!haveMpirun()) return;
  TempDir dir;
  auto failed = run(launchArgs(dir, {"--no_python", "sh", "-c", "exit $((3 + OMPI_COMM_WORLD_RANK))"}), {},
                    hermeticEnv(dir), 60000);
  CHECK((failed.exit_code == 3 || failed.exit_code == 4));  // whichever rank mpirun saw fail first
  CHECK(contains(failed.err, "accel: error: mpirun (pid "));
  BackgroundProcess job(launchArgs(dir, {envWorker(), "--sleep", "60", "--pidfile", dir.file("pids")}),
                        hermeticEnv(dir));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<pid_t> ranks;
  while (ranks.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks.clear();
    std::ifstream in(dir.file("pids"));
    for (pid_t p; in >> p;) ranks.push_back(p);
  }
  REQUIRE(ranks.size() == 2);
  job.signal(SIGINT);
  auto r = job.wait(30000);
  CHECK(r.exit_code == 130);
  for (pid_t p : ranks) {
    INFO("rank pid " << p);
    CHECK_FALSE(processAlive(p));
  }
}

TEST_CASE("mpirun: no mpirun on PATH is a usage error that says what to install", "[launch][mpirun]") {
  TempDir dir;
  auto env = hermeticEnv(dir);
  env["PATH"] = dir.file("empty-bin");
  auto r = run(launchArgs(dir, {"--no_python", "/bin/true"}), {}, env, 30000);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--mpirun_hostfile needs mpirun or mpiexec on PATH, and neither was found"));
  CHECK(contains(r.err, "apt install openmpi-bin"));
}
