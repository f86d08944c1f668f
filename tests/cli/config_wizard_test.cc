// SPDX-License-Identifier: Apache-2.0
// `accel config` driven through stdin (non-terminal mode): the files it writes must equal,
// byte for byte, what Accelerate 1.15's wizard writes for the same answers.
#include <catch2/catch.hpp>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::run;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

std::string goldenDir() { return ACCEL_SOURCE_DIR "/tests/golden/"; }

// What the wizard writes must survive load -> write unchanged: `accel config update` on a copy.
void expectRoundTrip(const TempDir& dir, const std::string& file) {
  std::string copy = dir.write("roundtrip-" + file, slurp(dir.file(file)));
  auto r = run({accelBinary(), "config", "update", "--config_file", copy});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(copy) == slurp(dir.file(file)));
}

// Runs the wizard with one answer per line, writing to <tmp>/out.yaml; round-trips the result.
accel::test::RunResult wizard(const TempDir& dir, const std::string& answers, const std::string& file = "out.yaml") {
  auto r = run({accelBinary(), "config", "--config_file", dir.file(file)}, answers, {{"HOME", dir.path()}});
  if (r.exit_code == 0) expectRoundTrip(dir, file);
  return r;
}

void expectGolden(const std::string& answers, const std::string& golden) {
  TempDir dir;
  auto r = wizard(dir, answers);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("accel configuration saved at " + dir.file("out.yaml")) != std::string::npos);
  CHECK(slurp(dir.file("out.yaml")) == slurp(goldenDir() + golden));
}

}  // namespace

TEST_CASE("wizard golden: no distributed training, all defaults", "[wizard][golden]") {
  expectGolden("\n\n\n\n\n\n\n", "no_distributed.yaml");
}

TEST_CASE("wizard golden: multi-GPU, 4 GPUs, fp16", "[wizard][golden]") {
  // type, machines, debug, dynamo, deepspeed, fsdp, megatron, processes, gpu ids, numa, precision
  expectGolden("2\n\n\n\n\n\n\n4\n\n\nfp16\n", "multi_gpu_4_fp16.yaml");
}

TEST_CASE("wizard golden: multi-CPU, 4 processes", "[wizard][golden]") {
  // type, machines, debug, mpirun, dynamo, processes, precision
  expectGolden("multi-CPU\n\n\n\n\n4\n\n", "multi_cpu_4.yaml");
}

TEST_CASE("wizard golden: two machines of 8 GPUs, bf16, rank 0", "[wizard][golden]") {
  // type, machines, rank, ip, port, same network, debug, dynamo, deepspeed, fsdp, megatron,
  // processes (total), gpu ids, numa, precision
  expectGolden("2\n2\n0\n10.0.0.1\n29500\n\n\n\n\n\n\n16\n\n\nbf16\n", "two_machines_bf16.yaml");
}

TEST_CASE("wizard golden: DeepSpeed ZeRO-3 with CPU offload", "[wizard][golden]") {
  // type, machines, debug, dynamo, deepspeed, json file?, stage, optimizer offload, param
  // offload, accumulation, clipping?, clipping value, 16-bit save, zero.Init, MoE, processes,
  // precision
  expectGolden("2\n\n\n\nyes\n\n3\ncpu\ncpu\n\nyes\n\nyes\nyes\n\n4\nbf16\n", "deepspeed_zero3_offload.yaml");
}

TEST_CASE("wizard golden: FSDP2 with transformer-based wrapping", "[wizard][golden]") {
  // type, machines, debug, dynamo, deepspeed, fsdp, version, reshard, offload, wrap policy,
  // _no_split_modules?, layer classes, state dict, ram-efficient loading, activation
  // checkpointing, parallelism config, processes, precision
  expectGolden("multi-GPU\n\n\n\n\nyes\n\n\n\n\n\nLlamaDecoderLayer\n\n\n\n\n4\nbf16\n", "fsdp2.yaml");
}

TEST_CASE("wizard: CPU-only no-distributed drops gpu_ids and sets use_cpu", "[wizard]") {
  TempDir dir;
  auto r = wizard(dir, "\nyes\n\n\n\n");
  REQUIRE(r.exit_code == 0);
  std::string expected = slurp(goldenDir() + "no_distributed.yaml");
  expected.replace(expected.find("gpu_ids: all\n"), 13, "");
  expected.replace(expected.find("use_cpu: false"), 14, "use_cpu: true");
  CHECK(slurp(dir.file("out.yaml")) == expected);
}

TEST_CASE("wizard: multi-CPU with mpirun expands ~ in the hostfile", "[wizard]") {
  TempDir dir;
  auto r = wizard(dir, "1\n\n\nyes\n\n\n4\n\n");
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir.file("out.yaml")).find("mpirun_config:\n  mpirun_hostfile: " + dir.path() + "/hostfile\n") !=
        std::string::npos);
}

TEST_CASE("wizard: FSDP version 1 writes the v1 keys", "[wizard]") {
  TempDir dir;
  // ... fsdp yes, version 1, strategy SHARD_GRAD_OP, offload, wrap SIZE_BASED_WRAP, min params,
  // backward prefetch, state dict, forward prefetch, orig params, ram-efficient (no), sync
  // states, activation checkpointing, processes, precision
  auto r = wizard(dir, "2\n\n\n\n\nyes\n0\n1\n\n1\n5000\n\n\n\n\nno\n\n\n2\n\n");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::string file = slurp(dir.file("out.yaml"));
  CHECK(file.find("distributed_type: FSDP\n") != std::string::npos);
  CHECK(file.find("  fsdp_reshard_after_forward: SHARD_GRAD_OP\n") != std::string::npos);
  CHECK(file.find("  fsdp_min_num_params: 5000\n") != std::string::npos);
  CHECK(file.find("  fsdp_backward_prefetch: BACKWARD_PRE\n") != std::string::npos);
  CHECK(file.find("  fsdp_sync_module_states: true\n") != std::string::npos);
  CHECK(file.find("  fsdp_version: 1\n") != std::string::npos);
  CHECK(file.find("gpu_ids") == std::string::npos);
}

TEST_CASE("wizard: dynamo with custom options and fp8 TE", "[wizard]") {
  TempDir dir;
  // NO, cpu only no, dynamo yes, backend default (inductor), customise yes, mode 2, fullgraph
  // yes, dynamic no, regional yes, deepspeed no, gpu ids, numa, precision fp8, backend te,
  // autocast, margin, interval, format, history, algo, higher precision yes, fprop yes, dgrad
  // no, wgrad yes
  auto r = wizard(dir, "\n\nyes\n\nyes\n2\nyes\n\nyes\n\n\n\nfp8\nte\n\n\n\n\n\n\nyes\nyes\n\nyes\n");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir.file("out.yaml"))
            .find("dynamo_config:\n  dynamo_backend: INDUCTOR\n  dynamo_mode: max-autotune\n"
                  "  dynamo_use_dynamic: false\n  dynamo_use_fullgraph: true\n"
                  "  dynamo_use_regional_compilation: true\n") != std::string::npos);
  CHECK(slurp(dir.file("out.yaml"))
            .find("fp8_config:\n  amax_compute_algo: max\n  amax_history_len: 1024\n  backend: TE\n"
                  "  fp8_format: HYBRID\n  interval: 1\n  margin: 0\n  override_linear_precision:\n"
                  "  - true\n  - false\n  - true\n  use_autocast_during_eval: false\n") != std::string::npos);
  CHECK(slurp(dir.file("out.yaml")).find("mixed_precision: fp8\n") != std::string::npos);
}

TEST_CASE("wizard: bad answers are explained and asked again", "[wizard]") {
  TempDir dir;
  // menu: 7 is out of range, "gpu" is no choice's text; yes/no: "y" is rejected like
  // Accelerate; processes: "four", a number past long long, then 1 (multi-GPU needs 2), then 4;
  // gpu ids: "0,x", "0,1" (too few for 4 processes), then all
  auto r = wizard(dir, "7\ngpu\n2\n\ny\n\n\n\n\n\nfour\n99999999999999999999\n1\n4\n0,x\n0,1\n\n\n\n");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("'7' is not one of the choices") != std::string::npos);
  CHECK(r.out.find("'gpu' is not one of the choices") != std::string::npos);
  CHECK(r.out.find("Please enter yes or no.") != std::string::npos);
  CHECK(r.out.find("Please enter an integer.") != std::string::npos);
  CHECK(r.out.find("Please enter an integer of at most 9223372036854775807.") != std::string::npos);
  CHECK(r.out.find("multi-GPU on one machine needs at least 2 processes") != std::string::npos);
  CHECK(r.out.find("is not `all` or a comma-separated list of GPU indices") != std::string::npos);
  CHECK(r.out.find("Please list at least 4 GPU ids") != std::string::npos);
  CHECK(slurp(dir.file("out.yaml")).find("num_processes: 4\n") != std::string::npos);
}

TEST_CASE("wizard: Enter at the process count takes a default it accepts, one per visible GPU", "[wizard]") {
  // Every answer after the first ones given is Enter, the process count's included.
  auto enterAll = [](int gpus, const std::string& given, int enters) {
    TempDir dir;
    auto r = run({accelBinary(), "config", "--config_file", dir.file("out.yaml")}, given + std::string(enters, '\n'),
                 accel::test::hermeticEnv(dir, {{"HOME", dir.path()},
                                                {"CUDA_VISIBLE_DEVICES", ""},
                                                {"ACCEL_NVML_LIBRARY", accel::test::fakeNvmlLibrary()},
                                                {"FAKE_NVML_GPUS", std::to_string(gpus)}}));
    if (r.exit_code == 0) r.out += slurp(dir.file("out.yaml"));
    return r;
  };
  // multi-GPU on one machine: at least 2, which it needs; Enter for machines, debug, dynamo,
  // DeepSpeed, FSDP, Megatron, processes, GPU ids, NUMA, precision
  for (const auto& [gpus, offered] : std::vector<std::pair<int, std::string>>{{4, "4"}, {1, "2"}, {0, "2"}}) {
    auto r = enterAll(gpus, "2\n", 10);
    INFO(gpus << " GPU(s): " << r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("How many GPU(s) should be used for distributed training? [" + offered + "]:") !=
          std::string::npos);
    CHECK(r.out.find("needs at least 2 processes") == std::string::npos);
    CHECK(r.out.find("\nnum_processes: " + offered + "\n") != std::string::npos);
  }
  // Two machines: the total, a multiple of the machine count (GPUs: 4 each; CPUs: 1 each).
  auto gpus = enterAll(4, "2\n2\n0\n10.0.0.1\n29500\n", 10);
  INFO(gpus.out << gpus.err);
  REQUIRE(gpus.exit_code == 0);
  CHECK(gpus.out.find("\nnum_processes: 8\n") != std::string::npos);
  auto cpus = enterAll(4, "multi-CPU\n2\n0\n10.0.0.1\n29500\n", 6);
  INFO(cpus.out << cpus.err);
  REQUIRE(cpus.exit_code == 0);
  CHECK(cpus.out.find("How many processes should be used for distributed training? [2]:") != std::string::npos);
  CHECK(cpus.out.find("\nnum_processes: 2\n") != std::string::npos);
}

TEST_CASE("wizard: total processes must divide across machines", "[wizard]") {
  TempDir dir;
  auto r = wizard(dir, "2\n2\n1\nhost0\n29500\nno\nc10d\n\n\n\n\n\n3\n16\n\n\n\n");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("please enter a multiple of 2") != std::string::npos);
  std::string file = slurp(dir.file("out.yaml"));
  CHECK(file.find("machine_rank: 1\n") != std::string::npos);
  CHECK(file.find("rdzv_backend: c10d\n") != std::string::npos);
  CHECK(file.find("same_network: false\n") != std::string::npos);
}

TEST_CASE("wizard: input ending early is an error and saves nothing", "[wizard]") {
  TempDir dir;
  const std::string existing = "distributed_type: MULTI_CPU\nnum_processes: 2\n";
  dir.write("out.yaml", existing);
  auto r = wizard(dir, "2\n\n");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("accel: error: input ended before the wizard finished") != std::string::npos);
  CHECK(r.err.find("nothing was saved") != std::string::npos);
  CHECK(slurp(dir.file("out.yaml")) == existing);
}

TEST_CASE("wizard: JSON path is written as JSON", "[wizard]") {
  TempDir dir;
  auto r = wizard(dir, "\n\n\n\n\n\n\n", "cfg.json");
  REQUIRE(r.exit_code == 0);
  std::string file = slurp(dir.file("cfg.json"));
  CHECK(file.rfind("{\n  \"compute_environment\": \"LOCAL_MACHINE\",\n", 0) == 0);
  CHECK(file.find("  \"tpu_env\": [],\n") != std::string::npos);
  CHECK(file.back() == '\n');
}
