// SPDX-License-Identifier: Apache-2.0
// `accel config default|update|show`, the default location rules, and the top-level CLI
// (help, version, unknown commands, both flag spellings).
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::fakeNvmlLibrary;
using accel::test::run;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

// Environment for a machine without GPUs whose Accelerate cache lives in `dir`.
std::map<std::string, std::string> noGpuEnv(const TempDir& dir) {
  return {{"HF_HOME", dir.file("hf")},
          {"ACCEL_NVML_LIBRARY", dir.file("no-such-nvml.so")},
          {"ACCEL_CUDA_LIBRARY", dir.file("no-such-cuda.so")}};
}

}  // namespace

TEST_CASE("config default on a machine without GPUs: one CPU process, never 0", "[config]") {
  TempDir dir;
  auto r = run({accelBinary(), "config", "default"}, {}, noGpuEnv(dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string path = dir.file("hf/accelerate/default_config.yaml");
  CHECK(contains(r.out, "accel configuration saved at " + path));
  CHECK(contains(r.out, "no GPU found"));
  CHECK(slurp(path) ==
        "compute_environment: LOCAL_MACHINE\ndebug: false\ndistributed_type: 'NO'\n"
        "downcast_bf16: false\nenable_cpu_affinity: false\nmachine_rank: 0\n"
        "main_training_function: main\nmixed_precision: 'no'\nnum_machines: 1\n"
        "num_processes: 1\nrdzv_backend: static\nsame_network: false\ntpu_use_cluster: false\n"
        "tpu_use_sudo: false\nuse_cpu: true\n");
}

TEST_CASE("config default refuses to overwrite without --force", "[config]") {
  TempDir dir;
  std::string path = dir.write("cfg.yaml", "distributed_type: MULTI_CPU\nnum_processes: 8\n");
  auto r =
      run({accelBinary(), "config", "default", "--config-file", path, "--mixed-precision", "bf16"}, {}, noGpuEnv(dir));
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "Configuration already exists at " + path));
  CHECK(contains(r.out, "--force"));
  CHECK(slurp(path) == "distributed_type: MULTI_CPU\nnum_processes: 8\n");
  auto forced = run({accelBinary(), "config", "default", "--config_file", path, "--mixed_precision", "bf16", "--force"},
                    {}, noGpuEnv(dir));
  CHECK(forced.exit_code == 0);
  CHECK(contains(slurp(path), "mixed_precision: bf16\n"));
}

TEST_CASE("config default rejects a bad --mixed_precision with a suggestion", "[config]") {
  TempDir dir;
  auto r = run({accelBinary(), "config", "default", "--mixed_precision", "bf61"}, {}, noGpuEnv(dir));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "accel: error: --mixed_precision: 'bf61' is not a valid precision"));
  CHECK(contains(r.err, "did you mean 'bf16'?"));
}

TEST_CASE("config default writes JSON for a .json path", "[config]") {
  TempDir dir;
  auto r = run({accelBinary(), "config", "default", "--config_file", dir.file("c.json")}, {}, noGpuEnv(dir));
  REQUIRE(r.exit_code == 0);
  CHECK(contains(slurp(dir.file("c.json")), "  \"distributed_type\": \"NO\",\n"));
}

TEST_CASE("config location: HF_HOME, then XDG_CACHE_HOME, then ~/.cache", "[config]") {
  TempDir dir;
  auto where = [&](std::map<std::string, std::string> env) {
    env["ACCEL_NVML_LIBRARY"] = dir.file("none.so");
    env["ACCEL_CUDA_LIBRARY"] = dir.file("none.so");
    auto r = run({accelBinary(), "config", "default", "--force"}, {}, env);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(contains(where({{"HF_HOME", dir.file("a")}, {"XDG_CACHE_HOME", dir.file("x")}}),
                 "saved at " + dir.file("a/accelerate/default_config.yaml")));
  CHECK(contains(where({{"HF_HOME", ""}, {"XDG_CACHE_HOME", dir.file("x")}}),
                 "saved at " + dir.file("x/huggingface/accelerate/default_config.yaml")));
  CHECK(contains(where({{"HF_HOME", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", dir.file("h")}}),
                 "saved at " + dir.file("h/.cache/huggingface/accelerate/default_config.yaml")));
}

TEST_CASE("config update converts legacy keys and fills defaults", "[config]") {
  TempDir dir;
  std::string path = dir.write("legacy.yaml",
                               "distributed_type: MULTI_GPU\nfp16: true\ndynamo_backend: inductor\n"
                               "num_processes: 2\nfsdp_config:\n  version: 2\n");
  auto r = run({accelBinary(), "config", "update", "--config_file", path});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "Successfully updated the configuration file at " + path + "."));
  CHECK(contains(r.err, "accel: note: converted legacy `fp16: true` to `mixed_precision: fp16`"));
  CHECK(slurp(path) ==
        "compute_environment: LOCAL_MACHINE\ndebug: false\ndistributed_type: MULTI_GPU\n"
        "downcast_bf16: false\ndynamo_config:\n  dynamo_backend: INDUCTOR\n"
        "enable_cpu_affinity: false\nfsdp_config:\n  fsdp_version: 2\nmachine_rank: 0\n"
        "main_training_function: main\nmixed_precision: fp16\nnum_machines: 1\n"
        "num_processes: 2\nrdzv_backend: static\nsame_network: false\ntpu_use_cluster: false\n"
        "tpu_use_sudo: false\nuse_cpu: false\n");
  auto again = run({accelBinary(), "config", "update", "--config_file", path});
  CHECK(again.exit_code == 0);
  CHECK(again.err.empty());
}

TEST_CASE("config update accepts bare NO/no and writes them quoted", "[config]") {
  TempDir dir;
  std::string path = dir.write("bare.yaml", "distributed_type: NO\nmixed_precision: no\ngpu_ids: 1\n");
  auto r = run({accelBinary(), "config", "update", "--config_file", path});
  REQUIRE(r.exit_code == 0);
  std::string file = slurp(path);
  CHECK(contains(file, "distributed_type: 'NO'\n"));
  CHECK(contains(file, "mixed_precision: 'no'\n"));
  CHECK(contains(file, "gpu_ids: '1'\n"));
  CHECK(contains(file, "num_processes: 1\n"));
}

TEST_CASE("config update reads and writes the JSON Accelerate's config default writes", "[config]") {
  TempDir dir;
  const std::string json_text =
      "{\n  \"compute_environment\": \"LOCAL_MACHINE\",\n  \"debug\": false,\n"
      "  \"distributed_type\": \"MULTI_GPU\",\n  \"downcast_bf16\": false,\n"
      "  \"enable_cpu_affinity\": false,\n  \"machine_rank\": 0,\n"
      "  \"main_training_function\": \"main\",\n  \"mixed_precision\": \"no\",\n"
      "  \"num_machines\": 1,\n  \"num_processes\": 4,\n  \"rdzv_backend\": \"static\",\n"
      "  \"same_network\": false,\n  \"tpu_use_cluster\": false,\n  \"tpu_use_sudo\": false,\n"
      "  \"use_cpu\": false\n}\n";
  std::string as_json = dir.write("c.json", json_text);
  auto r = run({accelBinary(), "config", "update", "--config_file", as_json});
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(as_json) == json_text);                    // already canonical: byte-identical
  std::string as_yaml = dir.write("c.yaml", json_text);  // Accelerate writes JSON into .yaml too
  REQUIRE(run({accelBinary(), "config", "update", "--config_file", as_yaml}).exit_code == 0);
  CHECK(contains(slurp(as_yaml), "distributed_type: MULTI_GPU\n"));
}

TEST_CASE("config show names the file and the source of every value", "[config]") {
  TempDir dir;
  std::string path = dir.write("c.yaml", "distributed_type: MULTI_CPU\nnum_processes: 4\n");
  auto r = run({accelBinary(), "config", "show", "--config_file", path});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "config file: " + path + "\n"));
  CHECK(contains(r.out, "distributed_type        MULTI_CPU      file, line 1"));
  CHECK(contains(r.out, "num_processes           4              file, line 2"));
  CHECK(contains(r.out, "rdzv_backend            static         default"));
  CHECK(contains(r.out, "main_process_ip         -              unset"));
  auto j = run({accelBinary(), "config", "show", "--config_file", path, "--json"});
  REQUIRE(j.exit_code == 0);
  CHECK(contains(j.out, "\"config_file\": \"" + path + "\""));
  CHECK(contains(j.out,
                 "\"num_processes\": {\n      \"line\": 2,\n      \"source\": \"file\",\n"
                 "      \"value\": 4\n    }"));
}

TEST_CASE("config show without any file shows defaults and says so", "[config]") {
  TempDir dir;
  auto r = run({accelBinary(), "config", "show"}, {}, {{"HF_HOME", dir.file("hf")}});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "config file: none (no file at " + dir.file("hf/accelerate/default_config.yaml")));
}

TEST_CASE("cli: version, help, help CMD, CMD --help", "[cli]") {
  auto version = run({accelBinary(), "--version"});
  CHECK(version.exit_code == 0);
  CHECK(contains(version.out, "accel 0."));
  auto help = run({accelBinary(), "--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "config"));
  auto help_cmd = run({accelBinary(), "help", "config", "default"});
  CHECK(help_cmd.exit_code == 0);
  CHECK(contains(help_cmd.out, "--mixed_precision"));
  CHECK(contains(help_cmd.out, "--force"));
  auto cmd_help = run({accelBinary(), "config", "show", "--help"});
  CHECK(cmd_help.exit_code == 0);
  CHECK(contains(cmd_help.out, "--json"));
  auto bare = run({accelBinary()});
  CHECK(bare.exit_code == 2);
  CHECK(contains(bare.err, "Usage:"));
}

TEST_CASE("cli: unknown commands and options are usage errors with a suggestion", "[cli]") {
  auto r = run({accelBinary(), "lauch"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "accel: error: unknown command 'accel lauch'"));
  auto sub = run({accelBinary(), "config", "valdate", "x.yaml"});
  CHECK(sub.exit_code == 2);
  CHECK(contains(sub.err, "accel: hint: did you mean 'validate'?"));
  auto help = run({accelBinary(), "help", "confg"});
  CHECK(help.exit_code == 2);
  CHECK(contains(help.err, "did you mean 'config'?"));
  auto option = run({accelBinary(), "config", "show", "--bogus"});
  CHECK(option.exit_code == 2);
  CHECK(contains(option.err, "accel: error: "));
  CHECK(contains(option.err, "accel: hint: run `accel config show --help`"));
}

TEST_CASE("config-templates: every file validates through the real binary", "[config][templates]") {
  std::vector<std::string> argv = {accelBinary(), "config", "validate"};
  for (const auto& entry : std::filesystem::directory_iterator(ACCEL_SOURCE_DIR "/config-templates")) {
    if (entry.path().extension() == ".yaml") argv.push_back(entry.path().string());
  }
  REQUIRE(argv.size() >= 3 + 8);
  auto r = run(argv);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
}

TEST_CASE("config default counts GPUs through NVML and honours CUDA_VISIBLE_DEVICES", "[config][gpu]") {
  TempDir dir;
  auto configure = [&](const std::string& gpus, const std::string& visible, const std::string& fail = "") {
    auto r = run({accelBinary(), "config", "default", "--force"}, {},
                 {{"HF_HOME", dir.file("hf")},
                  {"ACCEL_NVML_LIBRARY", fakeNvmlLibrary()},
                  {"FAKE_NVML_GPUS", gpus},
                  {"CUDA_VISIBLE_DEVICES", visible},
                  {"FAKE_NVML_FAIL", fail}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return std::make_pair(r.out, slurp(dir.file("hf/accelerate/default_config.yaml")));
  };
  auto [out4, four] = configure("4", "");
  CHECK(contains(out4, "found 4 GPU(s) (nvml)"));
  CHECK(contains(four, "distributed_type: MULTI_GPU\n"));
  CHECK(contains(four, "num_processes: 4\n"));
  CHECK(contains(four, "use_cpu: false\n"));
  auto [out1, one] = configure("1", "");
  CHECK(contains(one, "distributed_type: 'NO'\n"));
  CHECK(contains(one, "num_processes: 1\n"));
  CHECK(contains(one, "use_cpu: false\n"));
  auto [out2, two] = configure("4", "2,3");
  CHECK(contains(two, "num_processes: 2\n"));
  auto [out_bad, bad] = configure("4", "0,7,1");  // CUDA stops at the first invalid index
  CHECK(contains(bad, "distributed_type: 'NO'\n"));
  auto [out_fail, failed] = configure("4", "", "init");
  CHECK(contains(out_fail, "no GPU found"));
  CHECK(contains(out_fail, "nvmlInit_v2 failed"));
  CHECK(contains(failed, "use_cpu: true\n"));
}
