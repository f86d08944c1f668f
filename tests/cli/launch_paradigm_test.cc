// SPDX-License-Identifier: Apache-2.0
// The paradigm of a launch decided as `accelerate launch` 1.15 decides it, through the real
// binary: every GPU paradigm starts without GPUs (its workers use the CPU), the file's use_cpu
// means nothing to DeepSpeed's and torchrun's launchers (no ACCELERATE_USE_CPU), --cpu drops a
// DeepSpeed file's paradigm, and each of these says so in one line. Against the real Accelerate:
// tests/peers/check_launch_parity.py (its "real …" cases).
#include <catch2/catch.hpp>

#include "tests/cli/launch_support.h"

using namespace accel::test;

namespace {

std::string deepSpeedConfig(const TempDir& dir, bool use_cpu) {
  return dir.write(use_cpu ? "ds_cpu.yaml" : "ds.yaml",
                   "compute_environment: LOCAL_MACHINE\n"
                   "deepspeed_config:\n  gradient_accumulation_steps: 4\n  zero_stage: 3\n"
                   "  offload_optimizer_device: cpu\n  offload_param_device: cpu\n"
                   "distributed_type: DEEPSPEED\nmixed_precision: 'no'\nnum_machines: 1\nnum_processes: 2\n"
                   "use_cpu: " +
                       std::string(use_cpu ? "true" : "false") + "\n");
}

}  // namespace

TEST_CASE("launch paradigm: a GPU paradigm starts without GPUs, as Accelerate's launcher does", "[launch][paradigm]") {
  TempDir dir;
  auto multi = launch(dir, {"--multi_gpu", "--num_processes", "2", "--dry_run", envWorker()}, 0);
  CHECK(multi.exit_code == 0);
  CHECK(contains(multi.out, "2 worker(s) on machine 0 of 1, world size 2"));
  CHECK(
      contains(multi.err, "accel: no GPU visible (`accel env` says why): distributed_type MULTI_GPU's workers start"));
  CHECK(!contains(multi.out, "ACCELERATE_USE_CPU"));
  // For real: both DeepSpeed workers run with DeepSpeed's variables and without ACCELERATE_USE_CPU.
  auto ds = launch(dir, {"--config_file", deepSpeedConfig(dir, false), envWorker()}, 0);
  CHECK(ds.exit_code == 0);
  auto envs = workerEnvs(ds.out);
  REQUIRE(envs.size() == 2);
  for (auto& [rank, env] : envs) {
    CHECK(env["ACCELERATE_USE_DEEPSPEED"] == "true");
    CHECK(env["ACCELERATE_GRADIENT_ACCUMULATION_STEPS"] == "4");
    CHECK(env.count("ACCELERATE_USE_CPU") == 0);
  }
}

TEST_CASE("launch paradigm: use_cpu true is not read by DeepSpeed's launcher, and that is said", "[launch][paradigm]") {
  TempDir dir;
  for (int gpus : {0, 4}) {
    auto r = launch(dir, {"--config_file", deepSpeedConfig(dir, true), "--dry_run", envWorker()}, gpus);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err,
                   "accel: use_cpu: true (config file) is not read for distributed_type DEEPSPEED: "
                   "Accelerate's DeepSpeed launcher ignores it"));
    CHECK(contains(r.out, "  ACCELERATE_USE_DEEPSPEED=true\n"));
    CHECK(contains(r.out, "  ACCELERATE_DEEPSPEED_ZERO_STAGE=3\n"));
    CHECK(!contains(r.out, "ACCELERATE_USE_CPU"));
    CHECK(contains(r.err, "no GPU visible") == (gpus == 0));
  }
}

TEST_CASE("launch paradigm: --cpu with a DeepSpeed file runs plain CPU workers and says so", "[launch][paradigm]") {
  TempDir dir;
  auto r = launch(dir, {"--cpu", "--config_file", deepSpeedConfig(dir, false), "--dry_run", envWorker()}, 0);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "accel: --cpu: the config file's distributed_type DEEPSPEED is not used"));
  CHECK(contains(r.out, "  ACCELERATE_USE_CPU=True\n"));
  CHECK(!contains(r.out, "ACCELERATE_USE_DEEPSPEED"));
  CHECK(!contains(r.out, "ACCELERATE_GRADIENT_ACCUMULATION_STEPS"));
  // A file's use_cpu: false is exported as written, GPUs or not (Accelerate's simple launcher).
  auto no = launch(dir, {"--config_file", dir.write("no.yaml", "distributed_type: 'NO'\nuse_cpu: false\n"), "--dry_run",
                         envWorker()});
  CHECK(no.exit_code == 0);
  CHECK(contains(no.out, "  ACCELERATE_USE_CPU=False\n"));
}

TEST_CASE("launch paradigm: ParallelismConfig sizes that miss the world size warn, and fail a dry run",
          "[launch][paradigm][parallelism]") {
  TempDir dir;
  const std::vector<std::string> flags = {"--use_fsdp",
                                          "--fsdp_version",
                                          "2",
                                          "--num_processes",
                                          "2",
                                          "--use_parallelism_config",
                                          "--parallelism_config_tp_size",
                                          "4"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> all = flags;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  auto dry = launch(dir, with({"--dry_run", envWorker()}));
  CHECK(dry.exit_code == 2);
  CHECK(contains(dry.err,
                 "accel: error: the ParallelismConfig sizes multiply to 4, but the world size is 2: "
                 "dp_replicate_size 1 (default) × dp_shard_size 1 (default) × tp_size 4 (command line)"));
  CHECK(contains(dry.err, "accel: hint: set tp_size to 2 (--parallelism_config_tp_size) so that the product is 2"));
  // A launch starts the workers (the script may build its own ParallelismConfig) and warns once.
  auto started = launch(dir, with({envWorker()}));
  CHECK(started.exit_code == 0);
  CHECK(occurrences(started.err,
                    "accel: warning: the ParallelismConfig sizes multiply to 4, but the world size is 2") == 1);
  CHECK(workerEnvs(started.out).size() == 2);
  auto fits = launch(dir, {"--use_fsdp", "--fsdp_version", "2", "--num_processes", "2", "--use_parallelism_config",
                           "--parallelism_config_dp_shard_size", "2", "--dry_run", envWorker()});
  CHECK(fits.exit_code == 0);
  CHECK(!contains(fits.err, "ParallelismConfig"));
  // `accel config validate` reads a file's section against its num_processes.
  auto file = dir.write("pc.yaml",
                        "distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
                        "parallelism_config:\n  parallelism_config_dp_shard_size: 2\n"
                        "  parallelism_config_tp_size: 2\n");
  auto validated = run({accelBinary(), "config", "validate", file}, {}, hermeticEnv(dir), 30000);
  CHECK(validated.exit_code == 2);
  CHECK(contains(validated.err, "pc.yaml:5:1: the ParallelismConfig sizes multiply to 4, but the world size is 8"));
  CHECK(contains(validated.err, "(num_processes, line 2)"));
}

TEST_CASE("launch paradigm: RTX 40-series GPUs with an older driver get Accelerate's NCCL workaround",
          "[launch][paradigm][gpu]") {
  TempDir dir;
  auto on = [&](int gpus, const std::string& driver, std::vector<std::string> args,
                std::map<std::string, std::string> extra = {}) {
    extra.emplace("FAKE_NVML_NAME", "NVIDIA GeForce RTX 4090");
    extra.emplace("FAKE_NVML_DRIVER", driver);
    args.insert(args.end(), {"--dry_run", envWorker()});
    return launch(dir, args, gpus, extra);
  };
  auto old = on(2, "535.104.05", {"--multi_gpu", "--num_processes", "2"});
  CHECK(old.exit_code == 0);
  CHECK(contains(old.out, "  NCCL_P2P_DISABLE=1\n"));
  CHECK(contains(old.out, "  NCCL_IB_DISABLE=1\n"));
  CHECK(contains(old.err,
                 "accel: RTX 40-series GPUs with driver 535.104.05 (older than 550.40.07): "
                 "NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1 set, as Accelerate's launcher sets them"));
  // A value of the user's wins, and is named.
  auto mine = on(2, "535.104.05", {"--use_deepspeed", "--num_processes", "2"}, {{"NCCL_P2P_DISABLE", "0"}});
  CHECK(!contains(mine.out, "NCCL_P2P_DISABLE=1"));
  CHECK(contains(mine.out, "  NCCL_IB_DISABLE=1\n"));
  CHECK(contains(mine.err,
                 "NCCL_IB_DISABLE=1 set, as Accelerate's launcher sets them (NCCL's peer-to-peer path "
                 "hangs on these cards); yours kept: NCCL_P2P_DISABLE=0"));
  // Not: a fixed driver, one GPU, CPU workers.
  for (const auto& r :
       {on(2, "550.40.07", {"--multi_gpu", "--num_processes", "2"}), on(1, "535.104.05", {"--num_processes", "1"}),
        on(2, "535.104.05", {"--cpu", "--num_processes", "2"})}) {
    CHECK(r.exit_code == 0);
    CHECK(!contains(r.out, "NCCL_P2P_DISABLE"));
    CHECK(!contains(r.err, "RTX 40"));
  }
}
