// SPDX-License-Identifier: Apache-2.0
// `accel launch` supervision through the real binary and real worker processes: exit codes,
// fail-fast with a summary, signal forwarding, no orphans, whole prefixed lines and restarts
// (log files and console filters: launch_logs_test.cc).
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::BackgroundProcess;
using accel::test::contains;
using accel::test::envWorker;
using accel::test::hermeticEnv;
using accel::test::launchArgs;
using accel::test::processAlive;
using accel::test::run;
using accel::test::RunResult;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

RunResult superviseJob(const TempDir& dir, std::vector<std::string> launcher, std::vector<std::string> worker) {
  return run(launchArgs(std::move(launcher), std::move(worker)), {}, hermeticEnv(dir), 60000);
}

std::vector<pid_t> pids(const std::string& pidfile) {
  std::vector<pid_t> out;
  std::ifstream in(pidfile);
  for (pid_t p; in >> p;) out.push_back(p);
  return out;
}

bool allGone(const std::vector<pid_t>& list, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (pid_t p : list) any |= processAlive(p);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("supervision: success is 0, a failure passes the worker's own exit code", "[launch][supervise][failure]") {
  TempDir dir;
  auto ok = superviseJob(dir, {"--num_processes", "3"}, {});
  CHECK(ok.exit_code == 0);
  auto failed = superviseJob(dir, {"--num_processes", "2"},
                             {"--fail-rank", "1", "--exit-code", "7", "--stderr-lines", "25", "--sleep", "30"});
  INFO(failed.err);
  CHECK(failed.exit_code == 7);
  CHECK(std::regex_search(
      failed.err,
      std::regex(R"(accel: error: rank 1 \(pid \d+\) exited with code 7 after [0-9.]+ s; it failed first)")));
  CHECK(contains(failed.err, "accel: last 20 line(s) of rank 1's stderr:\naccel:   | stderr line 6\n"));
  CHECK(contains(failed.err, "accel:   | stderr line 25\naccel: stopped ranks 0\n"));
  CHECK_FALSE(contains(failed.err, "| stderr line 5\n"));
}

TEST_CASE("supervision: a worker killed by SIGKILL stops the others within the grace period",
          "[launch][supervise][failure]") {
  TempDir dir;
  const std::string pidfile = dir.file("pids");
  auto start = std::chrono::steady_clock::now();
  auto r = superviseJob(dir, {"--num_processes", "3", "--grace_period", "2"},
                        {"--fail-rank", "2", "--signal", "KILL", "--fail-after", "0.3", "--sleep", "60",
                         "--ignore-term", "--pidfile", pidfile, "--fail-when-up", dir.file("up")});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  CHECK(r.exit_code == 128 + 9);
  CHECK(contains(r.err, "exited") == false);
  CHECK(std::regex_search(r.err, std::regex(R"(rank 2 \(pid \d+\) was killed by signal SIGKILL \(9\))")));
  CHECK(contains(r.err, "rank 2 wrote nothing to stderr"));
  CHECK(contains(r.err, "still running after 2 s: sending SIGKILL"));  // they ignored SIGTERM
  CHECK(contains(r.err, "accel: stopped ranks 0, 1\n"));
  CHECK(seconds < 30);  // 0.3 s + 2 s grace once all are up; half the workers' 60 s sleep
  CHECK(allGone(pids(pidfile), 2000));
}

TEST_CASE("supervision: SIGINT reaches every worker and the launcher exits 130", "[launch][signals][failure]") {
  TempDir dir;
  BackgroundProcess launcher(launchArgs({"--num_processes", "2"}, {"--trap-int", "--sleep", "60"}), hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] pgid ", 2));
  launcher.signal(SIGINT);
  RunResult r = launcher.wait();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 130);
  CHECK(contains(r.out, "[rank 0] got SIGINT"));
  CHECK(contains(r.out, "[rank 1] got SIGINT"));
  CHECK(contains(r.err, "accel: received SIGINT: forwarding it to every worker"));
  CHECK(contains(r.err, "accel: interrupted by SIGINT; stopped ranks 0, 1"));
}

TEST_CASE("supervision: SIGTERM is forwarded, the launcher exits 143", "[launch][signals][failure]") {
  TempDir dir;
  BackgroundProcess launcher(launchArgs({"--num_processes", "2"}, {"--trap-term", "--sleep", "60"}), hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] pgid ", 2));
  launcher.signal(SIGTERM);
  RunResult r = launcher.wait();
  CHECK(r.exit_code == 143);
  CHECK(contains(r.out, "[rank 1] got SIGTERM"));
}

// torchrun's set (TORCHELASTIC_SIGNALS_TO_HANDLE, which accel's workers get too): SIGHUP and
// SIGQUIT are forwarded as well, and the launcher exits 128 + the signal.
TEST_CASE("supervision: SIGHUP and SIGQUIT are forwarded, the launcher exits 128 + signal",
          "[launch][signals][failure]") {
  for (int sig : {SIGHUP, SIGQUIT}) {
    TempDir dir;
    BackgroundProcess launcher(launchArgs({"--num_processes", "2"}, {"--sleep", "60"}), hermeticEnv(dir));
    REQUIRE(launcher.waitForOutput("] pgid ", 2));
    launcher.signal(sig);
    RunResult r = launcher.wait();
    INFO(::sigabbrev_np(sig) << "\n" << r.err);
    CHECK(r.exit_code == 128 + sig);
    CHECK(
        contains(r.err, std::string("accel: received SIG") + ::sigabbrev_np(sig) + ": forwarding it to every worker"));
  }
}

TEST_CASE("supervision: a second Ctrl-C kills workers that ignore the first", "[launch][signals][failure]") {
  TempDir dir;
  // Workers that ignore SIGINT (an ignored signal stays ignored across exec).
  BackgroundProcess launcher({accelBinary(), "launch", "--cpu", "--num_processes", "2", "--grace_period", "60",
                              "--no_python", "sh", "-c", "trap '' INT; echo ready; exec sleep 60"},
                             hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] ready", 2));
  auto start = std::chrono::steady_clock::now();
  launcher.signal(SIGINT);
  REQUIRE(launcher.waitForOutput("accel: received SIGINT: forwarding it to every worker"));
  launcher.signal(SIGINT);
  RunResult r = launcher.wait(20000);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  CHECK(r.exit_code == 130);
  CHECK(contains(r.err, "accel: second interrupt: killing all workers"));
  CHECK(seconds < 10);  // not the 60 s grace period
}

TEST_CASE("supervision: when the launcher is SIGKILLed no worker survives", "[launch][signals][failure]") {
  TempDir dir;
  const std::string pidfile = dir.file("pids");
  BackgroundProcess launcher(launchArgs({"--num_processes", "3"}, {"--sleep", "60", "--pidfile", pidfile}),
                             hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] pgid ", 3));
  auto workers = pids(pidfile);
  REQUIRE(workers.size() == 3);
  for (pid_t p : workers) CHECK(processAlive(p));
  launcher.signal(SIGKILL);
  launcher.wait();
  CHECK(allGone(workers, 5000));
}

TEST_CASE("supervision: what a worker leaves in its process group is cleaned up", "[launch][supervise][failure]") {
  TempDir dir;
  const std::string pidfile = dir.file("pids");
  auto r = superviseJob(dir, {"--num_processes", "2"}, {"--spawn-child", "--sleep", "0", "--pidfile", pidfile});
  CHECK(r.exit_code == 0);
  auto all = pids(pidfile);
  CHECK(all.size() == 4);  // 2 workers + 2 grandchildren
  CHECK(allGone(all, 3000));
}

TEST_CASE("supervision: a daemon a worker started (setsid) is ended with the job, its pipes not waited for",
          "[launch][supervise][failure]") {
  TempDir dir;
  // The daemons sleep 30 s, one holding its worker's stdout, one not (it points its output at
  // /dev/null, as daemons do). Without the launcher as their subreaper it would wait for the
  // first (past this run's 20 s limit) and both would outlive it.
  for (const char* how : {"keep", "close"}) {
    const std::string pidfile = dir.file(std::string("pids.") + how);
    const auto start = std::chrono::steady_clock::now();
    auto r = run(launchArgs({"--num_processes", "2"}, {"--spawn-daemon", how, "--pidfile", pidfile}), {},
                 hermeticEnv(dir), 20000);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(how << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(took < 15);
    auto all = pids(pidfile);
    CHECK(all.size() == 4);  // 2 workers + 2 daemons
    CHECK(allGone(all, 3000));
  }
}

// Both exits are waiting when the launcher looks (it is stopped meanwhile): rank 1 SIGKILLed from
// outside, then rank 0 exiting with a code over it (as a peer does when its connection breaks).
// The launcher reaps rank 0 first (the older child), but names rank 1.
TEST_CASE("supervision: a worker SIGKILLed from outside is named before a peer's exit over it",
          "[launch][supervise][failure]") {
  TempDir dir;
  const std::string pidfile = dir.file("pids");
  BackgroundProcess launcher(
      launchArgs({"--num_processes", "2"}, {"--sleep", "60", "--trap-term", "--pidfile", pidfile}), hermeticEnv(dir));
  REQUIRE(launcher.waitForOutput("] pgid ", 2));
  auto workers = pids(pidfile);
  REQUIRE(workers.size() == 2);
  launcher.signal(SIGSTOP);
  auto zombie = [](pid_t pid) {
    for (int i = 0; i < 1000; ++i) {
      if (contains(slurp("/proc/" + std::to_string(pid) + "/stat"), ") Z ")) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  // The pidfile's order is the start order, not the rank: find rank 1's pid from the output.
  std::smatch m;
  const std::string out = launcher.output();
  REQUIRE(std::regex_search(out, m, std::regex(R"(\[rank 1\] pid (\d+))")));
  const pid_t rank1 = std::stoi(m[1]);
  const pid_t rank0 = workers[0] == rank1 ? workers[1] : workers[0];
  ::kill(rank1, SIGKILL);
  REQUIRE(zombie(rank1));
  ::kill(rank0, SIGTERM);  // --trap-term: exits 43
  REQUIRE(zombie(rank0));
  launcher.signal(SIGCONT);
  auto r = launcher.wait();
  INFO(r.err);
  CHECK(r.exit_code == 137);
  CHECK(contains(r.err, "rank 1 (pid " + std::to_string(rank1) + ") was killed by signal SIGKILL (9)"));
  CHECK(contains(r.err, "it failed first"));
  CHECK(contains(r.err, "rank 0 exited with code 43 just before"));
}

TEST_CASE("supervision: output is whole lines, each prefixed with its rank", "[launch][output]") {
  TempDir dir;
  auto r = superviseJob(dir, {"--num_processes", "4"}, {"--lines", "2000", "--partial"});
  REQUIRE(r.exit_code == 0);
  std::regex good(R"(\[rank (\d)\] (line \d+ of rank (\d) x+|env [A-Z_]+=.*|pid \d+|pgid \d+|no newline at end))");
  size_t lines = 0, bad = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line); ++lines) {
    std::smatch m;
    if (!std::regex_match(line, m, good) || (m[3].matched && m[1] != m[3])) ++bad;
  }
  CHECK(bad == 0);
  CHECK(lines > 8000);
  CHECK(contains(r.out, "[rank 3] no newline at end\n"));  // a last partial line still ends cleanly
}

TEST_CASE("supervision: --max_restarts restarts the whole group with a new restart count",
          "[launch][restart][failure]") {
  TempDir dir;
  auto r = superviseJob(dir, {"--num_processes", "2", "--max_restarts", "2"},
                        {"--fail-rank", "0", "--fail-after", "0.5", "--exit-code", "5", "--sleep", "5",
                         "--fail-when-up", dir.file("up")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 5);
  CHECK(contains(r.err, "accel: [round 0] restarting all workers (restart 1 of 2)"));
  CHECK(contains(r.err, "accel: [round 1] restarting all workers (restart 2 of 2)"));
  CHECK(contains(r.out, "[rank 1] env TORCHELASTIC_RESTART_COUNT=2"));
  CHECK(contains(r.out, "[rank 0] env TORCHELASTIC_MAX_RESTARTS=2"));
}
