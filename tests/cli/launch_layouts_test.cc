// SPDX-License-Identifier: Apache-2.0
// torchrun's command line through the real binary: `accel torchrun` and a link named torchrun,
// PET_* defaults, and machines that run different counts on one host (127.0.0.1), whose ranks
// machine 0 gives out at the join, kept by a restart. The same across network namespaces, with
// the Kubernetes operators' pod variables, is tests/cluster.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <set>

#include "tests/cli/launch_support.h"

using namespace accel::test;

namespace {

// Machine `rank` of `machines`, `procs` workers, through torchrun's flags; the job port from
// ACCEL_JOB_PORT, which torchrun's grammar has no flag for.
std::vector<std::string> torchrunMachine(const JobPorts& job, int rank, int machines, int procs,
                                         std::vector<std::string> program) {
  std::vector<std::string> argv = {accelBinary(),      "torchrun",
                                   "--nnodes",         std::to_string(machines),
                                   "--node-rank",      std::to_string(rank),
                                   "--nproc-per-node", std::to_string(procs),
                                   "--master-addr",    "127.0.0.1",
                                   "--master-port",    std::to_string(job.port),
                                   "--max-restarts",   "1",
                                   "--no-python"};
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::map<std::string, std::string> env(const TempDir& dir, const JobPorts& job,
                                       std::map<std::string, std::string> extra = {}) {
  extra.emplace("ACCEL_JOB_PORT", std::to_string(job.job_port));
  return launchEnv(dir, 0, std::move(extra));
}

}  // namespace

TEST_CASE("layouts: machines of 1, 2 and 3 workers form a world of 6, ranks contiguous, kept by a restart",
          "[launch][machines][torchrun]") {
  TempDir dir;
  JobPorts job;
  // Rank 5 (machine 2's last) fails once every rank of its round printed its variables (env_worker
  // --fail-when-up), in both rounds: the restart must give the same ranks, then the job ends with
  // its code.
  const std::vector<std::string> program = {envWorker(), "--fail-rank",    "5",           "--exit-code",
                                            "3",         "--fail-when-up", dir.file("up")};
  std::vector<std::unique_ptr<BackgroundProcess>> machines;
  for (int k = 0; k < 3; ++k) {
    machines.push_back(std::make_unique<BackgroundProcess>(torchrunMachine(job, k, 3, k + 1, program), env(dir, job)));
  }
  std::string all;
  for (int k = 0; k < 3; ++k) {
    auto r = machines[static_cast<size_t>(k)]->wait(120000);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 3);
    all += r.out;
  }
  INFO(all);
  const std::vector<std::pair<int, int>> machine_of = {{0, 0}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 2}};
  for (const auto& [rank, k] : machine_of) {
    for (const char* round : {"0", "1"}) {
      const std::string prefix = "rank " + std::to_string(rank) + "] env ";
      INFO("rank " << rank << " round " << round);
      CHECK(occurrences(all, prefix + "WORLD_SIZE=6") == 2);  // both rounds
      CHECK(occurrences(all, prefix + "GROUP_RANK=" + std::to_string(k)) == 2);
      CHECK(occurrences(all, prefix + "LOCAL_WORLD_SIZE=" + std::to_string(k + 1)) == 2);
      CHECK(occurrences(all, prefix + "ROLE_RANK=" + std::to_string(rank)) == 2);
      CHECK(occurrences(all, prefix + "ROLE_WORLD_SIZE=6") == 2);
    }
  }
  CHECK(contains(all, "rank 1] env LOCAL_RANK=0"));
  CHECK(contains(all, "rank 5] env LOCAL_RANK=2"));
  CHECK(occurrences(all, "env TORCHELASTIC_RESTART_COUNT=1") == 6);
}

TEST_CASE("layouts: real collectives over machines of 1 and 3 workers", "[launch][machines][torchrun]") {
  TempDir dir;
  JobPorts job;
  const std::vector<std::string> program = {runtimeWorker(), "helpers", dir.file("shared.txt")};
  BackgroundProcess m0(torchrunMachine(job, 0, 2, 1, program), env(dir, job, {{"GLOO_SOCKET_IFNAME", "lo"}}));
  BackgroundProcess m1(torchrunMachine(job, 1, 2, 3, program), env(dir, job, {{"GLOO_SOCKET_IFNAME", "lo"}}));
  auto r0 = m0.wait(120000), r1 = m1.wait(120000);
  INFO(r0.out << r0.err << "\n---\n" << r1.out << r1.err);
  CHECK(r0.exit_code == 0);
  CHECK(r1.exit_code == 0);
  CHECK_FALSE(contains(r0.out + r1.out, "FAIL "));
  CHECK(contains(r1.out, "rank 3] ok gather"));
}

TEST_CASE("layouts: totals that the machines' workers do not add up to are named at the join, exit 2",
          "[launch][machines][torchrun]") {
  TempDir dir;
  JobPorts job;
  const std::vector<std::string> program = {"--no_python", envWorker()};
  auto accelMachine = [&](int rank, std::vector<std::string> counts) {
    std::vector<std::string> argv = {accelBinary(),
                                     "launch",
                                     "--cpu",
                                     "--num_machines",
                                     "2",
                                     "--machine_rank",
                                     std::to_string(rank),
                                     "--main_process_ip",
                                     "127.0.0.1",
                                     "--main_process_port",
                                     std::to_string(job.port)};
    argv.insert(argv.end(), counts.begin(), counts.end());
    argv.insert(argv.end(), program.begin(), program.end());
    return argv;
  };
  const auto start = std::chrono::steady_clock::now();
  BackgroundProcess m0(accelMachine(0, {"--num_processes", "6"}), env(dir, job));
  auto r1 = run(accelMachine(1, {"--nproc_per_node", "2"}), {}, env(dir, job), 60000);
  auto r0 = m0.wait(60000);
  INFO(r0.err << "\n---\n" << r1.err);
  CHECK(r0.exit_code == 2);
  CHECK(r1.exit_code == 2);
  CHECK(contains(r0.err, "was given --num_processes 6, but the machines' workers add up to 5: machine 0"));
  CHECK(secondsSince(start) < 20);
}

TEST_CASE("torchrun: a link named torchrun is torchrun, PET_* give its defaults, its flags only",
          "[launch][torchrun]") {
  TempDir dir;
  const std::string link = dir.file("torchrun");
  REQUIRE(::symlink(accelBinary().c_str(), link.c_str()) == 0);
  auto result = run({link, "--nproc-per-node=2", "--no-python", envWorker()}, {}, launchEnv(dir), 60000);
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  const auto envs = workerEnvs(result.out);
  CHECK(envs.size() == 2);
  CHECK(envs.at(1).at("WORLD_SIZE") == "2");
  CHECK(envs.at(1).at("OMP_NUM_THREADS") == "1");
  CHECK_FALSE(envs.at(1).count("ACCELERATE_USE_CPU"));
  CHECK_FALSE(contains(result.err, "config file"));  // torchrun reads none
  auto pet =
      run({link, "--dry-run", "--no-python", envWorker()}, {}, launchEnv(dir, 0, {{"PET_NPROC_PER_NODE", "3"}}), 60000);
  CHECK(pet.exit_code == 2);  // --dry_run is accel launch's, not torchrun's
  CHECK(contains(pet.err, "unknown option '--dry-run'"));
  auto three = run({accelBinary(), "launch", "--dry_run", "--cpu", "--no_python", envWorker()}, {},
                   launchEnv(dir, 0, {{"PET_NPROC_PER_NODE", "3"}, {"PET_MAX_RESTARTS", "1"}}), 60000);
  INFO(three.out);
  CHECK(contains(three.out, "nproc_per_node=3 (PET_NPROC_PER_NODE)"));
  CHECK(contains(three.out, "rank 2 (local rank 2)"));
  CHECK(contains(three.out, "TORCHELASTIC_MAX_RESTARTS=1"));
  auto refused = run({link, "--num_processes", "2", "--no-python", "/bin/true"}, {}, launchEnv(dir), 60000);
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.err, "is `accel launch`'s (Accelerate's), not torchrun's"));
}

TEST_CASE("torchrun: bad input exits 2 within seconds and starts nothing", "[launch][torchrun]") {
  TempDir dir;
  // Each: the words, then what the error names.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--nnodes", "3:2"}, "--nnodes 3:2: MIN 3 is above MAX 2"},
      {{"--nnodes", "0:2"}, "--nnodes '0:2' is not a machine count N or MIN:MAX"},
      {{"--nnodes", "1:2:3"}, "--nnodes '1:2:3' is not N or MIN:MAX"},
      {{"--max_restarts", "-1"}, "--max_restarts"},
      {{"--nnodes", "1:2", "--rdzv_backend", "c10d"}, "machines that come and go need a rendezvous"},
      {{"--nnodes", "1:2", "--rdzv_backend", "c10d", "--rdzv_endpoint", "127.0.0.1:29400", "--rdzv_conf",
        "join_timeout"},
       "--rdzv_conf 'join_timeout': 'join_timeout' is not KEY=VALUE"},
      {{"--nnodes", "1:2", "--rdzv_backend", "c10d", "--rdzv_endpoint", "127.0.0.1:29400", "--rdzv_conf",
        "last_call_timeout=soon"},
       "--rdzv_conf last_call_timeout=soon: 'soon' is not a whole number of seconds above 0"},
      {{"--nnodes", "1:2", "--rdzv_backend", "c10d", "--rdzv_endpoint", "127.0.0.1:29400", "--rdzv_conf",
        "is_host=maybe"},
       "--rdzv_conf is_host=maybe: 'maybe' is not a boolean"},
      {{"--rdzv_backend", "etcd"}, "--rdzv_backend etcd"},
      {{"--nproc_per_node", "gpu"}, "--nproc_per_node gpu: this machine has no GPU"},
      {{"--standalone", "--nnodes", "2"}, "a standalone job runs on one machine"},
      {{"--nnodes", "2", "--node_rank", "2"}, "machine_rank 2 (--node_rank) must be from 0 to 1"},
      {{"--nnodes", "2", "--node_rank", "1", "--master_addr", "no-such-host.invalid"},
       "main_process_ip no-such-host.invalid (--master_addr) does not resolve"},
  };
  for (const auto& [words, named] : cases) {
    std::vector<std::string> argv = {accelBinary(), "torchrun"};
    argv.insert(argv.end(), words.begin(), words.end());
    argv.insert(argv.end(), {"--no-python", "/bin/true"});
    const auto start = std::chrono::steady_clock::now();
    auto r = run(argv, {}, launchEnv(dir), 60000);
    INFO(named << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(secondsSince(start) < 10);
    CHECK(contains(r.err, "accel: error: "));
    CHECK(contains(r.err, named));
  }
  auto pet = run({accelBinary(), "torchrun", "--no-python", "/bin/true"}, {},
                 launchEnv(dir, 0, {{"PET_NNODES", "abc"}}), 60000);
  CHECK(pet.exit_code == 2);
  CHECK(contains(pet.err, "PET_NNODES 'abc'"));
  auto range =
      run({accelBinary(), "launch", "--cpu", "--no_python", "/bin/true"}, {},
          launchEnv(dir, 0, {{"PET_NNODES", "2"}, {"PET_NODE_RANK", "3"}, {"PET_MASTER_ADDR", "127.0.0.1"}}), 60000);
  INFO(range.err);
  CHECK(range.exit_code == 2);
  CHECK(contains(range.err, "machine_rank 3 (PET_NODE_RANK) must be from 0 to 1"));
}
