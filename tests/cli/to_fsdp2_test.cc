// SPDX-License-Identifier: Apache-2.0
// `accel to-fsdp2` through the real binary: the file Accelerate 1.15's `accelerate to-fsdp2`
// writes for the same input (the expected texts are its output), --output_file and --overwrite,
// every refusal; and the commands accel leaves to Accelerate (merge-weights, tpu-config).
// tests/peers/check_to_fsdp2.py compares the same against Accelerate itself.
#include <catch2/catch.hpp>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::run;
using accel::test::RunResult;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

const char* kFsdp1 =
    "compute_environment: LOCAL_MACHINE\n"
    "distributed_type: FSDP\n"
    "fsdp_config:\n"
    "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
    "  fsdp_backward_prefetch: BACKWARD_PRE\n"
    "  fsdp_cpu_ram_efficient_loading: true\n"
    "  fsdp_forward_prefetch: false\n"
    "  fsdp_offload_params: false\n"
    "  fsdp_sharding_strategy: FULL_SHARD\n"
    "  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
    "  fsdp_sync_module_states: true\n"
    "  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer\n"
    "  fsdp_use_orig_params: true\n"
    "  fsdp_version: 1\n"
    "mixed_precision: bf16\n"
    "num_processes: 8\n"
    "downcast_bf16: 'no'\n"
    "tpu_env: []\n";

// What `accelerate to-fsdp2` writes for kFsdp1: keys sorted, FSDP1-only keys gone.
const char* kFsdp2 =
    "compute_environment: LOCAL_MACHINE\n"
    "distributed_type: FSDP\n"
    "downcast_bf16: 'no'\n"
    "fsdp_config:\n"
    "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
    "  fsdp_cpu_ram_efficient_loading: true\n"
    "  fsdp_offload_params: false\n"
    "  fsdp_reshard_after_forward: true\n"
    "  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
    "  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer\n"
    "  fsdp_version: 2\n"
    "mixed_precision: bf16\n"
    "num_processes: 8\n"
    "tpu_env: []\n";

RunResult toFsdp2(std::vector<std::string> args) {
  args.insert(args.begin(), {accelBinary(), "to-fsdp2"});
  return run(args);
}

}  // namespace

TEST_CASE("to-fsdp2 converts an FSDP1 config to the file Accelerate writes", "[to-fsdp2]") {
  TempDir dir;
  const std::string in = dir.write("fsdp1.yaml", kFsdp1);
  auto r = toFsdp2({"--config_file", in, "--output_file", dir.file("fsdp2.yaml")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir.file("fsdp2.yaml")) == kFsdp2);
  CHECK(slurp(in) == kFsdp1);
  CHECK(contains(r.out, "FSDP2 configuration saved at " + dir.file("fsdp2.yaml")));
  for (const char* key : {"fsdp_backward_prefetch", "fsdp_sync_module_states", "fsdp_use_orig_params"}) {
    CHECK(contains(r.err, std::string("accel: warning: ") + in));
    CHECK(contains(r.err, std::string("fsdp_config.") + key + " has been removed in FSDP2: dropped"));
  }
  CHECK(contains(r.err, in + ":7:3: fsdp_config.fsdp_forward_prefetch has no counterpart in PyTorch's FSDP2: dropped"));
}

TEST_CASE("to-fsdp2 maps strategies to booleans and keeps other keys and values", "[to-fsdp2]") {
  TempDir dir;
  // Both keys given: the later one in the file counts, as in Accelerate's dict.
  const std::string both = dir.write("both.yaml",
                                     "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n"
                                     "  fsdp_reshard_after_forward: FULL_SHARD\nzeta: null\nalpha: {}\n");
  REQUIRE(toFsdp2({"--config_file", both, "--output_file", dir.file("both2.yaml")}).exit_code == 0);
  CHECK(slurp(dir.file("both2.yaml")) ==
        "alpha: {}\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: true\n"
        "  fsdp_version: 2\nzeta: null\n");
  const std::string odd = dir.write("odd.yaml",
                                    "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 1\n"
                                    "  fsdp_min_num_params: 100000000\n  my_key: ~\n");
  REQUIRE(toFsdp2({"--config_file", odd, "--output_file", dir.file("odd2.yaml")}).exit_code == 0);
  CHECK(slurp(dir.file("odd2.yaml")) ==
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_min_num_params: 100000000\n"
        "  fsdp_reshard_after_forward: 1\n  fsdp_version: 2\n  my_key: null\n");
}

TEST_CASE("to-fsdp2 --overwrite rewrites the config file itself", "[to-fsdp2]") {
  TempDir dir;
  const std::string in = dir.write("c.yaml", kFsdp1);
  auto r = toFsdp2({"--config_file", in, "--overwrite"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(in) == kFsdp2);
}

TEST_CASE("to-fsdp2 replaces an existing --output_file only with --overwrite", "[to-fsdp2]") {
  TempDir dir;
  const std::string in = dir.write("c.yaml", kFsdp1);
  const std::string out = dir.write("out.yaml", "keep: me\n");
  auto refused = toFsdp2({"--config_file", in, "--output_file", out});
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.err, "accel: error: " + out + ": output file already exists and --overwrite is not set"));
  CHECK(contains(refused.err, "accel: hint: pass --overwrite to replace it"));
  CHECK(slurp(out) == "keep: me\n");
  auto replaced = toFsdp2({"--config-file", in, "--output-file", out, "--overwrite"});
  INFO(replaced.err);
  REQUIRE(replaced.exit_code == 0);
  CHECK(slurp(out) == kFsdp2);
  CHECK(slurp(in) == kFsdp1);  // --output_file wins over rewriting in place
}

TEST_CASE("to-fsdp2 needs --config_file, and --output_file or --overwrite", "[to-fsdp2]") {
  TempDir dir;
  auto no_file = toFsdp2({"--output_file", dir.file("o.yaml")});
  CHECK(no_file.exit_code == 2);
  CHECK(contains(no_file.err, "--config_file"));
  const std::string in = dir.write("c.yaml", kFsdp1);
  auto no_output = toFsdp2({"--config_file", in});
  CHECK(no_output.exit_code == 2);
  CHECK(contains(no_output.err, "accel: error: --output_file is required unless --overwrite is set"));
  CHECK(contains(no_output.err, "--overwrite to rewrite " + in + " in place"));
  CHECK(slurp(in) == kFsdp1);
}

TEST_CASE("to-fsdp2 names a config file that does not exist", "[to-fsdp2]") {
  TempDir dir;
  auto r = toFsdp2({"--config_file", dir.file("missing.yaml"), "--output_file", dir.file("o.yaml")});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "accel: error: " + dir.file("missing.yaml") + ": config file not found"));
  CHECK(contains(r.err, "accel: hint: check the path given to --config_file"));
  auto directory = toFsdp2({"--config_file", dir.path(), "--output_file", dir.file("o.yaml")});
  CHECK(directory.exit_code == 2);
  CHECK(contains(directory.err, dir.path() + ": is a directory"));
  CHECK_FALSE(accel::test::run({"test", "-e", dir.file("o.yaml")}).exit_code == 0);
}

TEST_CASE("to-fsdp2 refuses a file without fsdp_config and writes nothing", "[to-fsdp2]") {
  TempDir dir;
  for (const char* text :
       {"distributed_type: MULTI_GPU\nnum_processes: 2\n", "distributed_type: FSDP\nfsdp_config: {}\n"}) {
    const std::string in = dir.write("c.yaml", text);
    auto r = toFsdp2({"--config_file", in, "--output_file", dir.file("o.yaml")});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "accel: error: " + in));
    CHECK(contains(r.err, "no fsdp_config in this file: nothing to convert to FSDP2"));
    CHECK(contains(r.err, "accel: hint: pass a config with distributed_type: FSDP"));
    CHECK_FALSE(run({"test", "-e", dir.file("o.yaml")}).exit_code == 0);
  }
}

TEST_CASE("to-fsdp2 on an FSDP2 file warns and writes it unchanged, as Accelerate does", "[to-fsdp2]") {
  TempDir dir;
  const std::string in = dir.write("c.yaml",
                                   "fsdp_config:\n  fsdp_version: 2\n  fsdp_use_orig_params: true\n"
                                   "distributed_type: FSDP\n");
  auto r = toFsdp2({"--config_file", in, "--output_file", dir.file("o.yaml")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "accel: warning: " + in + ":2:17: fsdp_config.fsdp_version is already 2: nothing converted"));
  CHECK(contains(r.err, "accel: hint: if its keys still have FSDP1 names, set fsdp_version to 1"));
  CHECK(slurp(dir.file("o.yaml")) ==
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_use_orig_params: true\n"
        "  fsdp_version: 2\n");
}

TEST_CASE("to-fsdp2 refuses broken YAML with file:line:column, an empty file and a list", "[to-fsdp2]") {
  TempDir dir;
  const std::string broken = dir.write("broken.yaml", "distributed_type: FSDP\nfsdp_config:\n  a: [1, 2\n");
  auto r = toFsdp2({"--config_file", broken, "--output_file", dir.file("o.yaml")});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "accel: error: " + broken + ":"));
  CHECK(contains(r.err, "invalid YAML"));
  const std::string empty = dir.write("empty.yaml", "# nothing\n");
  auto e = toFsdp2({"--config_file", empty, "--output_file", dir.file("o.yaml")});
  CHECK(e.exit_code == 2);
  CHECK(contains(e.err, "accel: error: " + empty + ": the config file is empty"));
  const std::string list = dir.write("list.yaml", "- distributed_type: FSDP\n");
  auto l = toFsdp2({"--config_file", list, "--output_file", dir.file("o.yaml")});
  CHECK(l.exit_code == 2);
  CHECK(contains(l.err, list + ":1:1: expected a map of keys at the top level, got a list"));
  const std::string scalar = dir.write("scalar.yaml", "distributed_type: FSDP\nfsdp_config: FULL_SHARD\n");
  auto s = toFsdp2({"--config_file", scalar, "--output_file", dir.file("o.yaml")});
  CHECK(s.exit_code == 2);
  CHECK(contains(s.err, scalar + ":2:14: fsdp_config must be a map of fsdp_* keys, got 'FULL_SHARD'"));
  CHECK_FALSE(run({"test", "-e", dir.file("o.yaml")}).exit_code == 0);
}

TEST_CASE("merge-weights is refused with what to use instead", "[merge-weights]") {
  for (std::vector<std::string> args : {std::vector<std::string>{}, {"ckpt_dir", "out", "--unsafe_serialization"}}) {
    args.insert(args.begin(), {accelBinary(), "merge-weights"});
    auto r = run(args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "accel: error: accel does not merge sharded FSDP checkpoints"));
    CHECK(contains(r.err, "accelerate merge-weights CHECKPOINT_DIR OUTPUT_PATH"));
    CHECK(contains(r.err, "dcp_to_torch_save"));
  }
}

TEST_CASE("tpu-config is refused with what to use instead", "[tpu-config]") {
  for (std::vector<std::string> args : {std::vector<std::string>{}, {"--tpu_name", "pod", "--command", "ls", "x"}}) {
    args.insert(args.begin(), {accelBinary(), "tpu-config"});
    auto r = run(args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "accel: error: accel does not set up TPU pods"));
    CHECK(contains(r.err, "accelerate tpu-config"));
    CHECK(contains(r.err, "gcloud compute tpus tpu-vm ssh"));
  }
}

TEST_CASE("to-fsdp2, merge-weights and tpu-config are listed by accel --help and accel help", "[to-fsdp2]") {
  for (const char* help : {"--help", "help"}) {
    auto r = run({accelBinary(), help});
    REQUIRE(r.exit_code == 0);
    for (const char* command : {"to-fsdp2", "merge-weights", "tpu-config"}) CHECK(contains(r.out, command));
  }
  auto r = run({accelBinary(), "help", "to-fsdp2"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "--output_file"));
}

TEST_CASE("to-fsdp2 writes a long escaped text folded as PyYAML does", "[to-fsdp2]") {
  TempDir dir;
  const std::string in =
      dir.write("c.yaml",
                "distributed_type: FSDP\nfsdp_config:\n  fsdp_note: \"caf\\u00e9 and a long sentence "
                "that goes on well past the eightieth column so that PyYAML folds it\"\n");
  auto r = toFsdp2({"--config_file", in, "--output_file", dir.file("o.yaml")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir.file("o.yaml")) ==
        "distributed_type: FSDP\nfsdp_config:\n"
        "  fsdp_note: \"caf\\xE9 and a long sentence that goes on well past the eightieth column\\\n"
        "    \\ so that PyYAML folds it\"\n  fsdp_version: 2\n");
}
