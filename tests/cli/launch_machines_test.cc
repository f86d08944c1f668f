// SPDX-License-Identifier: Apache-2.0
// Several machines' launchers on one host (127.0.0.1): the job channel (lib/launch/job/job_link.h)
// makes them one job. A failure anywhere stops every machine; restarts happen everywhere
// together; a launcher that is killed or falls silent is named by the others; wrong command
// lines are named at the join. Real `accel` processes, real sockets. The same across network
// namespaces, with links going down, is tests/cluster.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

std::vector<std::string> machine(const JobPorts& job, int rank, int machines, std::vector<std::string> extra,
                                 std::vector<std::string> program) {
  return machineLaunch(
      {"--cpu", "--num_machines", std::to_string(machines), "--machine_rank", std::to_string(rank), "--num_processes",
       std::to_string(2 * machines), "--main_process_ip", "127.0.0.1", "--main_process_port", std::to_string(job.port),
       "--job_port", std::to_string(job.job_port), "--grace_period", "2"},
      extra, program);
}

std::vector<std::string> sh(const std::string& script) { return {"--no_python", "sh", "-c", script}; }

// Machines 0 and 1 of two, every worker started (sleeping), for tests that then break one.
struct Running {
  std::unique_ptr<BackgroundProcess> m0, m1;
};
Running runningPair(const JobPorts& job, const TempDir& dir, std::vector<std::string> extra = {}) {
  const auto program = sh("echo started; sleep 60");
  Running r{std::make_unique<BackgroundProcess>(machine(job, 0, 2, extra, program), hermeticEnv(dir)),
            std::make_unique<BackgroundProcess>(machine(job, 1, 2, extra, program), hermeticEnv(dir))};
  REQUIRE(r.m0->waitForOutput("started", 2));
  REQUIRE(r.m1->waitForOutput("started", 2));
  return r;
}

}  // namespace

TEST_CASE("machines: a worker failing on machine 1 stops machine 0's workers, and both exit with its code and name it",
          "[launch][machines][failure]") {
  TempDir dir;
  JobPorts job;
  const auto program = sh("if [ $RANK = 3 ]; then sleep 1; echo 'disk full' >&2; exit 7; fi; sleep 60");
  BackgroundProcess m0(machine(job, 0, 2, {}, program), hermeticEnv(dir));
  auto start = std::chrono::steady_clock::now();
  auto m1 = run(machine(job, 1, 2, {}, program), {}, hermeticEnv(dir), 60000);
  auto r0 = m0.wait(30000);
  INFO(r0.err << m1.err);
  CHECK(secondsSince(start) < 10);  // not the sleep 60: machine 0 stopped its workers
  CHECK(m1.exit_code == 7);
  CHECK(r0.exit_code == 7);
  for (const auto& err : {r0.err, m1.err}) {
    CHECK(contains(err, "error: rank 3 on machine 1 ("));
    CHECK(contains(err, "exited with code 7"));
    CHECK(contains(err, "it failed first in the job"));
    CHECK(contains(err, "accel:   | disk full"));
  }
  CHECK(contains(r0.err, "accel: [round 0] rank 3 on machine 1 ("));
  CHECK(contains(r0.err, "stopped ranks 0, 1"));
}

TEST_CASE("machines: --max_restarts restarts every machine together, with a fresh MASTER_PORT",
          "[launch][machines][failure]") {
  TempDir dir;
  JobPorts job;
  const auto program =
      sh("echo \"round $TORCHELASTIC_RESTART_COUNT port $MASTER_PORT\"; "
         "if [ $RANK = 2 ] && [ $TORCHELASTIC_RESTART_COUNT = 0 ]; then sleep 0.5; exit 9; fi; sleep 1.5");
  BackgroundProcess m0(machine(job, 0, 2, {"--max_restarts", "1"}, program), hermeticEnv(dir));
  auto m1 = run(machine(job, 1, 2, {"--max_restarts", "1"}, program), {}, hermeticEnv(dir), 60000);
  auto r0 = m0.wait(30000);
  INFO(r0.out << r0.err << m1.out << m1.err);
  CHECK(r0.exit_code == 0);
  CHECK(m1.exit_code == 0);
  const std::string first = "round 0 port " + std::to_string(job.port);
  CHECK(contains(r0.out, first));
  CHECK(contains(m1.out, first));
  CHECK(contains(r0.out, "round 1 port "));
  CHECK_FALSE(contains(r0.out, "round 1 port " + std::to_string(job.port)));
  auto at = r0.out.find("round 1 port ");
  REQUIRE(at != std::string::npos);
  CHECK(contains(m1.out, r0.out.substr(at, r0.out.find('\n', at) - at)));  // the same new port everywhere
  for (const auto& err : {r0.err, m1.err}) {
    CHECK(contains(err, "accel: [round 0] restarting all workers (restart 1 of 1)"));
    CHECK(contains(err, "accel: [round 1] every worker finished, after 1 restart(s)"));
  }
}

TEST_CASE("machines: a launcher that is killed, or falls silent, is named and the others stop",
          "[launch][machines][failure]") {
  TempDir dir;
  SECTION("SIGKILL: its connection closes") {
    JobPorts job;
    auto [m0, m1] = runningPair(job, dir);
    auto start = std::chrono::steady_clock::now();
    m1->signal(SIGKILL);
    auto r0 = m0->wait(30000);
    INFO(r0.err);
    CHECK(secondsSince(start) < 5);
    CHECK(r0.exit_code == 1);
    CHECK(contains(r0.err, "error: machine 1 ("));
    CHECK(contains(r0.err, "was lost: its launcher's connection closed"));
  }
  SECTION("SIGSTOP: no heartbeat within --heartbeat_timeout") {
    JobPorts job;
    auto [m0, m1] = runningPair(job, dir, {"--heartbeat_timeout", "2"});
    auto start = std::chrono::steady_clock::now();
    m1->signal(SIGSTOP);
    auto r0 = m0->wait(30000);
    m1->signal(SIGKILL);
    INFO(r0.err);
    CHECK(secondsSince(start) < 2 + 5);
    CHECK(r0.exit_code == 1);
    CHECK(contains(r0.err, "was lost: no word from its launcher for 2 s"));
  }
  SECTION("machine 0 killed: the others name it") {
    JobPorts job;
    auto [m0, m1] = runningPair(job, dir);
    m0->signal(SIGKILL);
    auto r1 = m1->wait(30000);
    INFO(r1.err);
    CHECK(r1.exit_code == 1);
    CHECK(contains(r1.err, "error: machine 0 (127.0.0.1:" + std::to_string(job.job_port) + ") was lost"));
  }
}

TEST_CASE("machines: Ctrl-C on machine 0 stops the whole job", "[launch][machines][failure]") {
  TempDir dir;
  JobPorts job;
  auto [m0, m1] = runningPair(job, dir);
  m0->signal(SIGINT);
  auto r0 = m0->wait(30000);
  auto r1 = m1->wait(30000);
  INFO(r0.err << r1.err);
  CHECK(r0.exit_code == 130);
  CHECK(r1.exit_code == 130);
  CHECK(contains(r1.err, "SIGINT on machine 0: stopping this machine's workers"));
}

TEST_CASE("machines: wrong command lines are named at the join, within the join timeout",
          "[launch][machines][failure]") {
  TempDir dir;
  const auto program = sh("sleep 60");
  const std::vector<std::string> quick = {"--rdzv_conf", "join_timeout=3"};
  SECTION("two launchers claim the same machine_rank") {
    JobPorts job;
    BackgroundProcess m0(machine(job, 0, 3, quick, program), hermeticEnv(dir));
    BackgroundProcess a(machine(job, 1, 3, quick, program), hermeticEnv(dir));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto b = run(machine(job, 1, 3, quick, program), {}, hermeticEnv(dir), 30000);
    auto r0 = m0.wait(30000);
    auto ra = a.wait(30000);
    INFO(r0.err << ra.err << b.err);
    for (const auto& r : {r0, ra, b}) {
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "machine_rank 1 is claimed twice"));
      CHECK(contains(r.err, "give each machine its own --machine_rank, 0 to 2"));
    }
  }
  SECTION("a different --num_processes") {
    JobPorts job;
    BackgroundProcess m0(machine(job, 0, 2, quick, program), hermeticEnv(dir));
    auto argv = machine(job, 1, 2, quick, program);
    argv[8] = "6";  // --num_processes
    auto m1 = run(argv, {}, hermeticEnv(dir), 30000);
    auto r0 = m0.wait(30000);
    INFO(r0.err << m1.err);
    CHECK(m1.exit_code == 2);
    CHECK(r0.exit_code == 2);
    CHECK(contains(m1.err, "has --num_machines 2 and --num_processes 6, machine 0 ("));
  }
  SECTION("a machine that never joins") {
    JobPorts job;
    auto start = std::chrono::steady_clock::now();
    auto r0 = run(machine(job, 0, 3, quick, program), {}, hermeticEnv(dir), 30000);
    INFO(r0.err);
    CHECK(secondsSince(start) < 3 + 5);
    CHECK(r0.exit_code == 1);
    CHECK(contains(r0.err, "machines 1, 2 of 3 did not join within 3 s"));
  }
  SECTION("machine 0 unreachable") {
    JobPorts job;
    auto r1 = run(machine(job, 1, 2, quick, program), {}, hermeticEnv(dir), 30000);
    INFO(r1.err);
    CHECK(r1.exit_code == 1);
    CHECK(contains(r1.err, "could not reach machine 0's launcher at 127.0.0.1:" + std::to_string(job.job_port) +
                               " within 3 s: connection refused"));
    CHECK(contains(r1.err, "hint: check that --main_process_ip 127.0.0.1 is machine 0's address"));
  }
}

TEST_CASE("machines: two launchers with their own host identity share memory inside each and use Gloo between",
          "[launch][machines][shm]") {
  TempDir dir;
  JobPorts job;
  const std::vector<std::string> program = {runtimeWorker(), "helpers", dir.file("shared.txt")};
  auto on = [&](const char* host) {
    return hermeticEnv(dir, {{"ACCEL_HOST_ID", host}, {"ACCEL_DEBUG", "INFO"}, {"GLOO_SOCKET_IFNAME", "lo"}});
  };
  BackgroundProcess m0(machine(job, 0, 2, {}, program), on("machine-a"));
  BackgroundProcess m1(machine(job, 1, 2, {}, program), on("machine-b"));
  auto r0 = m0.wait(120000), r1 = m1.wait(120000);
  INFO(r0.out << r0.err << "\n---\n" << r1.out << r1.err);
  CHECK(r0.exit_code == 0);
  CHECK(r1.exit_code == 0);
  CHECK(contains(r0.err, "group of 4 ranks, 2 hosts: ranks 0,1 | 2,3: shared memory within a host"));
  CHECK_FALSE(contains(r0.out + r1.out, "FAIL "));
  CHECK(contains(r1.out, "rank 3] ok gather"));  // "[HOST:rank 3]"
}
