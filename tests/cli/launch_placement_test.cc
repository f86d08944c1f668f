// SPDX-License-Identifier: Apache-2.0
// Where `accel launch` puts its workers, through the real binary: two machines on loopback, GPU
// counts checked against the fake NVML, SLURM detection, a busy port, CPU affinity.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "lib/common/cpu_list.h"
#include "lib/launch/facts/system_facts.h"
#include "lib/launch/plan/cpu_affinity.h"
#include "tests/cli/launch_support.h"

using namespace accel::test;

TEST_CASE("launch: a two-machine job on loopback", "[launch][multinode]") {
  TempDir dir;
  const std::string port = std::to_string(accel::test::freeLoopbackPort());
  auto machine = [&](int rank) {
    return std::make_unique<BackgroundProcess>(
        std::vector<std::string>{accelBinary(), "launch", "--cpu", "--num_machines", "2", "--num_processes", "4",
                                 "--machine_rank", std::to_string(rank), "--main_process_ip", "127.0.0.1",
                                 "--main_process_port", port, envWorker()},
        launchEnv(dir));
  };
  auto m0 = machine(0);
  auto m1 = machine(1);
  RunResult r0 = m0->wait(), r1 = m1->wait();
  INFO(r0.out << r0.err << r1.out << r1.err);
  REQUIRE(r0.exit_code == 0);
  REQUIRE(r1.exit_code == 0);
  auto e0 = workerEnvs(r0.out), e1 = workerEnvs(r1.out);
  REQUIRE((e0.size() == 2 && e0.count(0) && e0.count(1)));
  REQUIRE((e1.size() == 2 && e1.count(2) && e1.count(3)));
  CHECK(e1[3]["LOCAL_RANK"] == "1");
  CHECK(e1[3]["GROUP_RANK"] == "1");
  CHECK(e1[3]["GROUP_WORLD_SIZE"] == "2");
  CHECK(e1[3]["WORLD_SIZE"] == "4");
  CHECK(e1[3]["LOCAL_WORLD_SIZE"] == "2");
  CHECK(e1[3]["MASTER_PORT"] == port);
  // The same run id and store secret on both machines, with no coordination.
  CHECK(e0[0]["ACCEL_RUN_ID"] == e1[2]["ACCEL_RUN_ID"]);
  CHECK(e0[0]["ACCEL_STORE_TOKEN"] == e1[3]["ACCEL_STORE_TOKEN"]);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  CHECK(contains(r1.out, "[" + std::string(host) + ":rank 3] env RANK=3"));
}

TEST_CASE("launch: GPU counts are checked against the GPUs that exist", "[launch][gpu]") {
  TempDir dir;
  auto four = launch(dir, {"--dry_run", envWorker()}, 4);
  CHECK(contains(four.out, "4 worker(s) on machine 0 of 1, world size 4"));
  CHECK(contains(four.out, "  ACCELERATE_MIXED_PRECISION=no\n"));
  CHECK(!contains(four.out, "ACCELERATE_USE_CPU"));  // Accelerate's multi-GPU path does not say it
  auto over = launch(dir, {"--num_processes", "8", envWorker()}, 4);
  CHECK(over.exit_code == 2);
  CHECK(contains(over.err, "accel: error: 8 processes per machine but only 4 GPU(s) visible"));
  CHECK(contains(over.err, "accel: hint: pass --num_processes 4"));
  auto ids = launch(dir, {"--gpu_ids", "1,6", "--num_processes", "2", envWorker()}, 4);
  CHECK(ids.exit_code == 2);
  CHECK(contains(ids.err, "gpu_ids (command line) names GPU 6, but this machine has 4 GPU(s)"));
  auto subset = launch(dir, {"--gpu_ids", "2,3", "--multi_gpu", "--num_processes", "2", "--dry_run", envWorker()}, 4);
  CHECK(contains(subset.out, "  CUDA_VISIBLE_DEVICES=2,3\n"));
  // No GPU at all: Accelerate launches anyway (launch_paradigm_test.cc), so the counts are not checked.
  auto none = launch(dir, {"--gpu_ids", "1,6", "--num_processes", "8", "--dry_run", envWorker()}, 0);
  CHECK(none.exit_code == 0);
  auto cpu = launch(dir, {"--cpu", "--num_processes", "8", "--dry_run", envWorker()}, 4);
  CHECK(cpu.exit_code == 0);
  auto zero = launch(dir, {"--num_processes", "0", envWorker()});
  CHECK(zero.exit_code == 2);
  auto both = launch(dir, {"--cpu", "--use_fsdp", envWorker()});
  CHECK(both.exit_code == 2);
  CHECK(contains(both.err, "you can only use one of"));
}

TEST_CASE("launch: a busy port — replaced on one machine, an error across machines", "[launch][port][failure]") {
  TempDir dir;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 1);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string busy = std::to_string(ntohs(a.sin_port));
  auto single = launch(dir, {"--cpu", "--main_process_port", busy, envWorker()});
  INFO(single.err);
  CHECK(single.exit_code == 0);
  CHECK(contains(single.err, "accel: port " + busy + " is busy (held by pid " + std::to_string(::getpid())));
  CHECK_FALSE(contains(single.out, "MASTER_PORT=" + busy));
  auto multi = launch(dir, {"--cpu", "--num_machines", "2", "--num_processes", "2", "--main_process_ip", "127.0.0.1",
                            "--main_process_port", busy, envWorker()});
  CHECK(multi.exit_code == 1);
  CHECK(contains(multi.err, "accel: error: port " + busy + " on this machine is busy (held by pid"));
  ::close(fd);
}

TEST_CASE("launch: enable_cpu_affinity pins each worker to its own share of the CPUs", "[launch][affinity]") {
  TempDir dir;
  const auto cpus = accel::launch::facts::usableCpus();
  REQUIRE_FALSE(cpus.empty());
  const auto shares = accel::launch::plan::splitCpus(cpus, 2);
  auto allowed = [](const std::string& out) {  // rank -> the kernel's Cpus_allowed_list of that worker
    std::map<int, std::string> lists;
    std::regex line(R"(\[rank (\d+)\] Cpus_allowed_list:\s*(\S+))");
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it)
      lists[std::stoi((*it)[1])] = (*it)[2];
    return lists;
  };
  const std::vector<std::string> grep = {"/bin/grep", "Cpus_allowed_list", "/proc/self/status"};
  std::vector<std::string> args = {"--cpu", "--num_processes",      "2", "--main_process_port",
                                   "0",     "--enable_cpu_affinity"};
  args.insert(args.end(), grep.begin(), grep.end());
  auto r = launch(dir, args);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lists = allowed(r.out);
  CHECK(lists[0] == accel::cpuListText(shares[0]));
  CHECK(lists[1] == accel::cpuListText(shares[1]));
  // From the config file too (Accelerate's wizard writes the key; its launcher ignores it).
  const std::string config = dir.write(
      "affinity.yaml", "distributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu: true\nenable_cpu_affinity: true\n");
  args = {"--config_file", config, "--main_process_port", "0"};
  args.insert(args.end(), grep.begin(), grep.end());
  r = launch(dir, args);
  REQUIRE(r.exit_code == 0);
  CHECK(allowed(r.out)[1] == accel::cpuListText(shares[1]));
  // Off (the default): every worker keeps the launcher's whole set.
  args = {"--cpu", "--num_processes", "2", "--main_process_port", "0"};
  args.insert(args.end(), grep.begin(), grep.end());
  r = launch(dir, args);
  REQUIRE(r.exit_code == 0);
  CHECK(allowed(r.out)[0] == accel::cpuListText(cpus));
  CHECK(allowed(r.out)[1] == accel::cpuListText(cpus));
}
