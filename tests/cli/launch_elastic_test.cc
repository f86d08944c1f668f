// SPDX-License-Identifier: Apache-2.0
// Machines that come and go (--nnodes MIN:MAX through a c10d endpoint, lib/launch/job/job_hub.h):
// several machines' launchers on one host, machine 0 chosen with --rdzv_conf is_host. A lost
// machine's round ends and the next forms from who is left; a machine that joins ends a round
// below MAX; beyond MAX it is a spare that takes a lost machine's place; below MIN the job waits
// join_timeout, then ends saying so. Real `accel` processes, real sockets. The same across
// network namespaces, with links going down, is tests/cluster.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

// Each worker says its place in the round, then works for `seconds`.
std::vector<std::string> worker(int seconds) {
  return {"--no_python", "sh", "-c",
          "echo \"place rank=$RANK world=$WORLD_SIZE group=$GROUP_RANK of=$GROUP_WORLD_SIZE "
          "restarts=$TORCHELASTIC_RESTART_COUNT\"; sleep " +
              std::to_string(seconds)};
}

std::vector<std::string> launcher(const JobPorts& job, const std::string& nnodes, bool host,
                                  std::vector<std::string> extra, const std::vector<std::string>& program) {
  return machineLaunch(
      {"--cpu", "--nnodes", nnodes, "--nproc_per_node", "2", "--rdzv_backend", "c10d", "--rdzv_endpoint",
       "127.0.0.1:" + std::to_string(job.port), "--job_port", std::to_string(job.job_port), "--heartbeat_timeout", "3",
       "--grace_period", "2", "--rdzv_conf", std::string(host ? "is_host=1" : "is_host=0") + ",last_call_timeout=1"},
      extra, program);
}

using Launcher = std::unique_ptr<BackgroundProcess>;
Launcher start(const JobPorts& job, const TempDir& dir, const std::string& nnodes, bool host,
               const std::vector<std::string>& program, std::vector<std::string> extra = {},
               std::map<std::string, std::string> env = {}) {
  return std::make_unique<BackgroundProcess>(launcher(job, nnodes, host, std::move(extra), program),
                                             hermeticEnv(dir, std::move(env)));
}

}  // namespace

TEST_CASE("elastic: a lost machine's round ends and the next forms from the machines left, no restart counted",
          "[launch][machines][elastic][scenario]") {
  TempDir dir;
  JobPorts job;
  const auto program = worker(6);
  auto m0 = start(job, dir, "2:3", true, program);
  auto a = start(job, dir, "2:3", false, program);
  auto b = start(job, dir, "2:3", false, program);
  REQUIRE(m0->waitForOutput("world=6", 2));
  REQUIRE(a->waitForOutput("world=6", 2));
  REQUIRE(b->waitForOutput("world=6", 2));
  b->signal(SIGKILL);
  auto r0 = m0->wait(60000);
  auto ra = a->wait(60000);
  INFO(r0.err << r0.out << ra.err << ra.out);
  CHECK(r0.exit_code == 0);
  CHECK(ra.exit_code == 0);
  CHECK(contains(r0.err, "accel: round 0: 3 machines"));
  for (const auto* r : {&r0, &ra}) {
    CHECK(contains(r->err, "accel: [round 0] machine "));  // 1 or 2: the two joined at once
    CHECK(contains(r->err, "was lost: its launcher's connection closed"));
    CHECK(contains(r->err, "round 1: 2 machines"));
    CHECK(contains(r->err, "world size 4"));
    CHECK(contains(r->err, "every worker finished, in round 1 (the machines changed)"));
    CHECK(contains(r->out, "world=4"));
    CHECK_FALSE(contains(r->out, "restarts=1"));  // a change of machines is not a restart
  }
  CHECK(contains(r0.out, "place rank=1 world=4 group=0 of=2 restarts=0"));
  CHECK(contains(ra.out, "place rank=2 world=4 group=1 of=2 restarts=0"));
}

TEST_CASE("elastic: MIN machines start after the last call, and a machine that joins forms a larger round",
          "[launch][machines][elastic][scenario]") {
  TempDir dir;
  JobPorts job;
  const auto program = worker(5);
  auto m0 = start(job, dir, "1:2", true, program);
  REQUIRE(m0->waitForOutput("world=2 group=0 of=1", 2));  // alone: MIN 1, last call 1 s
  auto a = start(job, dir, "1:2", false, program);
  auto r0 = m0->wait(60000);
  auto ra = a->wait(60000);
  INFO(r0.err << r0.out << ra.err << ra.out);
  CHECK(r0.exit_code == 0);
  CHECK(ra.exit_code == 0);
  CHECK(contains(r0.err, "accel: round 0: 1 machine ("));
  CHECK(contains(r0.err, "joined: ending round 0 to form one with it"));
  CHECK(contains(r0.err, "round 1: 2 machines"));
  CHECK(contains(r0.out, "place rank=0 world=4 group=0 of=2 restarts=0"));
  CHECK(contains(ra.out, "place rank=2 world=4 group=1 of=2 restarts=0"));
  CHECK_FALSE(contains(ra.out, "world=2"));  // it waited for the next round
}

TEST_CASE("elastic: a machine beyond MAX is a spare that takes a lost machine's place, the world unchanged",
          "[launch][machines][elastic][scenario]") {
  TempDir dir;
  JobPorts job;
  const auto program = worker(6);
  auto m0 = start(job, dir, "2:2", true, program);
  auto a = start(job, dir, "2:2", false, program);
  REQUIRE(m0->waitForOutput("world=4", 2));
  auto spare = start(job, dir, "2:2", false, program);
  REQUIRE(m0->waitForOutput("joined as a spare"));
  a->signal(SIGKILL);
  auto r0 = m0->wait(60000);
  auto rs = spare->wait(60000);
  INFO(r0.err << r0.out << rs.err << rs.out);
  CHECK(r0.exit_code == 0);
  CHECK(rs.exit_code == 0);
  CHECK(contains(r0.err, "round 2 has the most machines") == false);
  CHECK(contains(r0.err, "round 0 has the most machines (2)"));
  CHECK(contains(r0.err, "round 1: 2 machines"));
  CHECK(contains(rs.out, "place rank=2 world=4 group=1 of=2 restarts=0"));
  CHECK_FALSE(contains(r0.out, "world=2"));
}

TEST_CASE("elastic: below MIN the job waits join_timeout for machines, then ends saying so",
          "[launch][machines][elastic][scenario]") {
  TempDir dir;
  JobPorts job;
  const auto program = worker(30);
  const std::vector<std::string> extra = {"--rdzv_conf", "is_host=1,last_call_timeout=1,join_timeout=3"};
  auto m0 = std::make_unique<BackgroundProcess>(
      [&] {
        auto argv = launcher(job, "2:3", true, {}, program);
        argv[argv.size() - program.size() - 1] = "is_host=1,last_call_timeout=1,join_timeout=3";
        return argv;
      }(),
      hermeticEnv(dir));
  auto a = start(job, dir, "2:3", false, program);
  REQUIRE(m0->waitForOutput("world=4", 2));
  const auto lost_at = std::chrono::steady_clock::now();
  a->signal(SIGKILL);
  auto r0 = m0->wait(60000);
  INFO(r0.err);
  CHECK(r0.exit_code == 1);
  CHECK(secondsSince(lost_at) < 3 + 20);
  CHECK(contains(r0.err, "1 machine left, fewer than the job's 2 (--nnodes 2:3); waiting up to 3 s"));
  CHECK(contains(r0.err, "error: machine 1 ("));
  CHECK(contains(r0.err, "and only 1 machine of the job's minimum 2 (--nnodes 2:3) came within 3 s"));
}

TEST_CASE("elastic: a round of one machine and one process still gets torchrun's variables",
          "[launch][machines][elastic]") {
  TempDir dir;
  JobPorts job;
  auto r = run({accelBinary(), "launch", "--cpu", "--nnodes", "1:2", "--nproc_per_node", "1", "--rdzv_backend", "c10d",
                "--rdzv_endpoint", "127.0.0.1:" + std::to_string(job.port), "--job_port", std::to_string(job.job_port),
                "--rdzv_conf", "is_host=1,last_call_timeout=1", "--no_python", "sh", "-c",
                "echo \"world=$WORLD_SIZE rank=$RANK group=$GROUP_RANK of=$GROUP_WORLD_SIZE\""},
               {}, hermeticEnv(dir), 60000);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "world=1 rank=0 group=0 of=1"));
}

TEST_CASE("elastic: a machine whose workers fail first round after round is asked to leave",
          "[launch][machines][elastic][scenario][policy]") {
  TempDir dir;
  JobPorts job;
  const std::vector<std::string> program = {
      "--no_python", "sh", "-c",
      "echo \"world $WORLD_SIZE\"; if [ -n \"$BREAK_HERE\" ]; then sleep 1; echo broken >&2; exit 5; fi; sleep 6"};
  const std::vector<std::string> policy = {"--max_restarts",         "5", "--startup_timeout", "0",
                                           "--max_machine_failures", "2"};
  auto m0 = start(job, dir, "2:3", true, program, policy);
  auto a = start(job, dir, "2:3", false, program, policy);
  auto bad = start(job, dir, "2:3", false, program, policy, {{"BREAK_HERE", "1"}});
  auto r0 = m0->wait(90000);
  auto ra = a->wait(90000);
  auto rb = bad->wait(30000);
  INFO(r0.err << ra.err << rb.err);
  CHECK(r0.exit_code == 0);
  CHECK(ra.exit_code == 0);
  CHECK(rb.exit_code == 1);
  CHECK(
      contains(r0.err, "was asked to leave: its workers failed first in 2 rounds in a row (--max_machine_failures 2)"));
  CHECK(contains(rb.err, "error: machine "));
  CHECK(contains(rb.err, "was asked to leave"));
  CHECK(contains(r0.err, "round 2: 2 machines"));
  CHECK(contains(r0.out, "world 4"));
}

TEST_CASE("elastic: machines that come and go with a launch that starts every machine at once are refused",
          "[launch][machines][elastic]") {
  TempDir dir;
  {
    std::ofstream hosts(dir.file("hostfile"));
    hosts << "localhost slots=1\n127.0.0.2 slots=1\n";
  }
  const std::vector<std::string> elastic = {"--nnodes",       "2:3", "--rdzv_backend", "c10d", "--rdzv_endpoint",
                                            "127.0.0.1:29400"};
  for (const std::string flag : {"--hostfile", "--mpirun_hostfile"}) {
    std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", flag, dir.file("hostfile")};
    argv.insert(argv.end(), elastic.begin(), elastic.end());
    argv.insert(argv.end(), {"--no_python", "/bin/true"});
    for (bool endpoint : {true, false}) {  // without an endpoint the hosts' launch is still what is named
      auto words = argv;
      if (!endpoint) words.erase(words.begin() + 9, words.begin() + 11);
      auto r = run(words, {}, hermeticEnv(dir), 60000);
      INFO(flag << " " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "--nnodes 2:3 (machines that come and go): "));
      CHECK(contains(r.err, "every machine at once and ends them together"));
      CHECK(contains(r.err, "--rdzv_backend c10d --rdzv_endpoint HOST:PORT` on each machine"));
    }
  }
}
