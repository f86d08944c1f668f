// SPDX-License-Identifier: Apache-2.0
// `accel deepspeed` and a link named deepspeed, through the real binary: DeepSpeed's worker
// variables and --local_rank=N, the GPUs of a fake NVML chosen as DeepSpeed chooses them,
// --bind_cores_to_rank as the kernel then holds it, --save_pid. Against the real DeepSpeed
// launcher: tests/peers/check_deepspeed_parity.py; two hosts with --no_ssh:
// tests/cluster/cluster_cases.sh (deepspeed_no_ssh).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "lib/launch/facts/system_facts.h"
#include "tests/cli/launch_support.h"
#include "tests/support/skip.h"

using namespace accel::test;

namespace {

RunResult deepspeed(const TempDir& dir, std::vector<std::string> args, int gpus = 0,
                    std::map<std::string, std::string> extra = {}, const std::string& program = accelBinary()) {
  std::vector<std::string> argv = {program};
  if (program == accelBinary()) argv.push_back("deepspeed");
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, launchEnv(dir, gpus, std::move(extra)), 60000);
}

}  // namespace

TEST_CASE("deepspeed: DeepSpeed's variables and --local_rank, on the GPUs DeepSpeed would choose",
          "[launch][deepspeed]") {
  TempDir dir;
  auto two = deepspeed(dir, {"--num_gpus", "2", "--no_local_rank", envWorker()}, 4);
  INFO(two.out << two.err);
  CHECK(two.exit_code == 0);
  auto envs = workerEnvs(two.out);
  REQUIRE(envs.size() == 2);
  for (auto& [rank, env] : envs) {
    CHECK(env["CUDA_VISIBLE_DEVICES"] == "0,1");
    CHECK(env["WORLD_SIZE"] == "2");
    CHECK(env["LOCAL_RANK"] == std::to_string(rank));
    CHECK(env.count("ACCELERATE_MIXED_PRECISION") == 0);  // none of Accelerate's
    CHECK(env.count("GROUP_RANK") == 0);                  // none of torchrun's
  }
  // CUDA_VISIBLE_DEVICES turns into --include over the GPUs it leaves visible, as DeepSpeed's
  // runner turns it; so ids past that count are refused, as DeepSpeed refuses them.
  auto cvd = deepspeed(dir, {"--no_local_rank", envWorker()}, 4, {{"CUDA_VISIBLE_DEVICES", "0,1"}});
  CHECK(cvd.exit_code == 0);
  CHECK(contains(cvd.err, "accel: CUDA_VISIBLE_DEVICES=0,1: --include=localhost:0,1, as DeepSpeed sets it"));
  CHECK(workerEnvs(cvd.out).size() == 2);
  auto past = deepspeed(dir, {"--no_local_rank", envWorker()}, 4, {{"CUDA_VISIBLE_DEVICES", "2,3"}});
  CHECK(past.exit_code == 2);
  CHECK(contains(past.err, "accel: error: --include 'localhost:2,3': host 'localhost' has no slot 2"));
  // Through a link named deepspeed; --local_rank=N after the script, before its arguments.
  const std::string link = dir.file("deepspeed");
  std::filesystem::create_symlink(accelBinary(), link);
  auto linked = deepspeed(dir, {"--num_gpus", "2", "--no_python", "/bin/echo", "hi"}, 0, {}, link);
  CHECK(linked.exit_code == 0);
  CHECK(contains(linked.out, "[rank 0] --local_rank=0 hi\n"));
  CHECK(contains(linked.out, "[rank 1] --local_rank=1 hi\n"));
  // --enable_each_rank_log: both streams of each rank in DIR/<stamp>_rank<R>.log, none on the console.
  auto logged = deepspeed(dir, {"--num_gpus", "2", "--enable_each_rank_log", dir.file("logs"), "--no_local_rank",
                                envWorker(), "--stderr-lines", "1"});
  CHECK(logged.exit_code == 0);
  CHECK(!contains(logged.out, "] env RANK="));
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("logs"))) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() == 2);
  CHECK(names[1].size() == std::string("20261128120000_rank1.log").size());
  CHECK(names[1].substr(14) == "_rank1.log");
  const std::string rank1 = slurp(dir.file("logs") + "/" + names[1]);
  CHECK(contains(rank1, "env RANK=1\n"));
  CHECK(contains(rank1, "stderr line 1\n"));
  auto not_dir = deepspeed(dir, {"--enable_each_rank_log", envWorker(), envWorker()});
  CHECK(not_dir.exit_code == 2);
  CHECK(contains(not_dir.err, "should not be a file, it should be a directory."));
  auto bad = deepspeed(dir, {"--autotuning", "run", "t.py"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "accel: error: --autotuning run: accel does not run DeepSpeed's autotuner"));
}

TEST_CASE("deepspeed: --bind_cores_to_rank pins each rank to its share of the cores, --save_pid",
          "[launch][deepspeed]") {
  const auto machine = accel::launch::facts::gatherMachine("");
  if (machine.physical_cores < 2) return skip("--bind_cores_to_rank needs 2 physical cores for 2 ranks");
  TempDir dir;
  auto r = deepspeed(dir, {"--num_gpus", "2", "--bind_cores_to_rank", "--bind_core_list", "0-1", "--no_local_rank",
                           "--save_pid", envWorker(), "--report-binding"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "[rank 0] cpus 0\n"));
  CHECK(contains(r.out, "[rank 1] cpus 1\n"));
  CHECK(workerEnvs(r.out)[1]["OMP_NUM_THREADS"] == "1");
  CHECK(contains(r.out, "launcher pid: "));
  // The pid file is there while the launcher runs, and gone after it.
  const auto at = r.out.find("launcher pid: ");
  REQUIRE(at != std::string::npos);
  const std::string pid = r.out.substr(at + 14, r.out.find('\n', at) - at - 14);
  CHECK(::access(("/tmp/" + pid + ".deepspeed").c_str(), F_OK) != 0);
  auto too_few = deepspeed(dir, {"--num_gpus", "3", "--bind_cores_to_rank", "--bind_core_list", "0-1", envWorker()});
  CHECK(too_few.exit_code == 2);
  CHECK(contains(too_few.err, "at least one core needs to be assigned to each rank"));
}
