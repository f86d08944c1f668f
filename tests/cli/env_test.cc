// SPDX-License-Identifier: Apache-2.0
// `accel env` through the real binary, with fake NVML / libcuda libraries standing in for GPUs.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::fakeCudaLibrary;
using accel::test::fakeNvmlLibrary;
using accel::test::run;
using accel::test::TempDir;
using nlohmann::json;

namespace {

// Runs `accel env ARGS` with a hermetic GPU setup: the fake NVML with `gpus` devices (or no
// NVML at all when gpus < 0) and never the machine's own libcuda.
accel::test::RunResult env(const TempDir& dir, int gpus, std::vector<std::string> args = {},
                           std::map<std::string, std::string> vars = {}) {
  vars.emplace("HF_HOME", dir.file("hf"));
  vars.emplace("ACCEL_NVML_LIBRARY", gpus < 0 ? dir.file("no-nvml.so") : fakeNvmlLibrary());
  vars.emplace("ACCEL_CUDA_LIBRARY", dir.file("no-cuda.so"));
  vars.emplace("FAKE_NVML_GPUS", std::to_string(std::max(gpus, 0)));
  vars.emplace("CUDA_VISIBLE_DEVICES", "");
  std::vector<std::string> argv = {accelBinary(), "env"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, vars);
}

json envJson(const TempDir& dir, int gpus, std::map<std::string, std::string> vars = {}) {
  auto r = env(dir, gpus, {"--json"}, std::move(vars));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

std::vector<int> physicalIndices(const json& report) {
  std::vector<int> out;
  for (const auto& d : report["gpus"]["devices"]) out.push_back(d["physical_index"].get<int>());
  return out;
}

}  // namespace

TEST_CASE("env without a driver: GPUs none with the reason, exit 0", "[env]") {
  TempDir dir;
  auto r = env(dir, -1);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("\nCopy-and-paste the text below in your GitHub issue\n\n- `accel` version: ", 0) == 0);
  CHECK(contains(r.out, "- GPUs: none (no NVIDIA driver: " + dir.file("no-nvml.so")));
  CHECK(contains(r.out, "- System RAM: "));
  CHECK(contains(r.out, "\t- lo ipv4 127.0.0.1 (loopback)\n"));
  CHECK(r.err.empty());
  json j = envJson(dir, -1);
  CHECK(j["gpus"]["source"].is_null());
  CHECK(j["gpus"]["count"] == 0);
  CHECK(j["gpus"]["devices"] == json::array());
  CHECK(contains(j["gpus"]["unavailable_reason"].get<std::string>(), "no-nvml.so"));
}

TEST_CASE("env with one fake GPU lists every device fact", "[env]") {
  TempDir dir;
  auto r = env(dir, 1);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out,
                 "- GPUs: 1 visible of 1 (CUDA_VISIBLE_DEVICES unset; via NVML, driver "
                 "560.35.03, supports CUDA 12.6)\n"));
  CHECK(contains(r.out,
                 "\t- GPU 0: NVIDIA H100 80GB HBM3 | 80.00 GiB (80.00 GiB free) | compute "
                 "9.0 | PCI 00000000:18:00.0 | GPU-00000000-1111-4222-8333-000000000000\n"));
  CHECK_FALSE(contains(r.out, "GPU topology"));
  json d = envJson(dir, 1)["gpus"]["devices"][0];
  CHECK(d == json({{"index", 0},
                   {"physical_index", 0},
                   {"name", "NVIDIA H100 80GB HBM3"},
                   {"uuid", "GPU-00000000-1111-4222-8333-000000000000"},
                   {"pci_bus_id", "00000000:18:00.0"},
                   {"memory_total_bytes", 85899345920ull},
                   {"memory_free_bytes", 85899345920ull},
                   {"compute_capability", "9.0"}}));
}

TEST_CASE("env with 4 GPUs prints the topology matrix", "[env]") {
  TempDir dir;
  SECTION("NVSwitch board: NV18 between every pair") {
    auto r = env(dir, 4);
    CHECK(contains(r.out,
                   "\t      GPU0  GPU1  GPU2  GPU3\n\tGPU0  X     NV18  NV18  NV18\n"
                   "\tGPU1  NV18  X     NV18  NV18\n"));
    CHECK(envJson(dir, 4)["gpus"]["topology"][3] == json({"NV18", "NV18", "NV18", "X"}));
  }
  SECTION("a chosen matrix: NVLink pairs, PCIe switches, across sockets") {
    const std::string matrix = "X,NV4,PXB,SYS;NV4,X,SYS,PHB;PXB,SYS,X,NV2;SYS,PHB,NV2,X";
    auto r = env(dir, 4, {}, {{"FAKE_NVML_MATRIX", matrix}});
    CHECK(contains(r.out,
                   "\tGPU0  X     NV4   PXB   SYS\n\tGPU1  NV4   X     SYS   PHB\n"
                   "\tGPU2  PXB   SYS   X     NV2\n\tGPU3  SYS   PHB   NV2   X\n"));
  }
}

TEST_CASE("env honours CUDA_VISIBLE_DEVICES by index and by UUID", "[env]") {
  TempDir dir;
  const std::string matrix = "X,NV4,PXB,SYS;NV4,X,SYS,PHB;PXB,SYS,X,NV2;SYS,PHB,NV2,X";
  json by_index = envJson(dir, 4, {{"CUDA_VISIBLE_DEVICES", "2,0"}, {"FAKE_NVML_MATRIX", matrix}});
  CHECK(physicalIndices(by_index) == std::vector<int>{2, 0});
  CHECK(by_index["gpus"]["devices"][1]["index"] == 1);
  CHECK(by_index["gpus"]["physical_count"] == 4);
  CHECK(by_index["gpus"]["cuda_visible_devices"] == "2,0");
  CHECK(by_index["gpus"]["topology"] == json::array({json::array({"X", "PXB"}), json::array({"PXB", "X"})}));
  json by_uuid = envJson(dir, 4, {{"CUDA_VISIBLE_DEVICES", "GPU-33333333,GPU-1111"}});
  CHECK(physicalIndices(by_uuid) == std::vector<int>{3, 1});
  CHECK(physicalIndices(envJson(dir, 4, {{"CUDA_VISIBLE_DEVICES", "1,9,2"}})) == std::vector<int>{1});
  CHECK(physicalIndices(envJson(dir, 4, {{"CUDA_VISIBLE_DEVICES", "GPU-"}})).empty());  // ambiguous
  CHECK(physicalIndices(envJson(dir, 4, {{"CUDA_VISIBLE_DEVICES", "3,3"}})) == std::vector<int>{3});
  auto text = env(dir, 4, {}, {{"CUDA_VISIBLE_DEVICES", "3,0"}});
  CHECK(contains(text.out, "- GPUs: 2 visible of 4 (CUDA_VISIBLE_DEVICES=3,0; via NVML"));
  CHECK(contains(text.out, "\t- GPU 0: NVIDIA H100 80GB HBM3 | physical GPU 3 |"));
}

TEST_CASE("env reports a failing NVML call as a warning and carries on", "[env]") {
  TempDir dir;
  auto memory = env(dir, 2, {}, {{"FAKE_NVML_FAIL", "memory"}});
  CHECK(memory.exit_code == 0);
  CHECK(contains(memory.out,
                 "- Warning: nvmlDeviceGetMemoryInfo failed for GPU 1: Unknown Error "
                 "(NVML error 999)\n"));
  CHECK(contains(memory.out, "\t- GPU 1: NVIDIA H100 80GB HBM3 | compute 9.0 |"));
  CHECK(contains(memory.out, "- Hostname: "));  // the rest of the report is there
  auto init = env(dir, 2, {}, {{"FAKE_NVML_FAIL", "init"}});
  CHECK(init.exit_code == 0);
  CHECK(contains(init.out, "- GPUs: none (no NVIDIA driver: nvmlInit_v2 failed: Unknown Error"));
  CHECK(contains(init.out, "- Warning: NVML loaded but nvmlInit_v2 failed: Unknown Error (NVML error 999)\n"));
  json j = envJson(dir, 2, {{"FAKE_NVML_FAIL", "uuid"}});
  CHECK(j["gpus"]["warnings"].size() == 2);
  CHECK(j["gpus"]["devices"][0]["uuid"].is_null());
}

TEST_CASE("env falls back to libcuda when NVML is missing", "[env]") {
  TempDir dir;
  auto r = run({accelBinary(), "env", "--json"}, {},
               {{"HF_HOME", dir.file("hf")},
                {"ACCEL_NVML_LIBRARY", dir.file("no-nvml.so")},
                {"ACCEL_CUDA_LIBRARY", fakeCudaLibrary()},
                {"FAKE_CUDA_GPUS", "2"}});
  REQUIRE(r.exit_code == 0);
  json g = json::parse(r.out)["gpus"];
  CHECK(g["source"] == "cuda");
  CHECK(g["count"] == 2);
  CHECK(g["cuda_driver_version"] == "12.4");
  CHECK(g["devices"][1]["name"] == "NVIDIA A100-SXM4-40GB (fake 1)");
  CHECK(g["devices"][1]["compute_capability"] == "8.0");
  CHECK(g["devices"][1]["pci_bus_id"] == "0000:08:00.0");
  CHECK(g["devices"][1]["uuid"] == "GPU-abababab-abab-abab-abab-ababababab01");
  CHECK(contains(g["warnings"][0].get<std::string>(), "NVML unavailable"));
}

TEST_CASE("env --json: stable keys, numbers as numbers, lists as arrays", "[env]") {
  TempDir dir;
  json j = envJson(dir, 4);
  CHECK(j["schema_version"] == 1);
  for (const char* key : {"accel", "os", "cpu", "memory", "gpus", "libraries", "host", "environment", "config"}) {
    INFO(key);
    CHECK(j.contains(key));
  }
  CHECK(j["accel"]["version"].is_string());
  CHECK(j["cpu"]["logical_cores"].is_number_integer());
  CHECK(j["cpu"]["logical_cores"].get<int>() >= 1);
  CHECK(j["cpu"]["numa_nodes"].get<int>() >= 1);
  CHECK(j["memory"]["total_bytes"].get<unsigned long long>() > 0);
  CHECK(j["memory"]["available_bytes"].is_number());
  CHECK(j["os"]["kernel"].is_string());
  CHECK(j["gpus"]["devices"].is_array());
  CHECK(j["gpus"]["devices"][0]["memory_total_bytes"].is_number_unsigned());
  CHECK(j["gpus"]["topology"].is_array());
  CHECK(j["host"]["interfaces"].is_array());
  bool loopback = false;
  for (const auto& i : j["host"]["interfaces"]) loopback |= i["loopback"].get<bool>();
  CHECK(loopback);
  CHECK(j["libraries"]["nccl"].contains("version"));
  CHECK(j["environment"].is_object());
}

TEST_CASE("env shows the launch environment variables that are set", "[env]") {
  TempDir dir;
  auto r =
      env(dir, -1, {}, {{"NCCL_DEBUG", "INFO"}, {"SLURM_JOB_ID", "77"}, {"ACCEL_UNRELATED", "x"}, {"MY_VAR", "y"}});
  CHECK(contains(r.out, "\t- NCCL_DEBUG=INFO\n"));
  CHECK(contains(r.out, "\t- SLURM_JOB_ID=77\n"));
  CHECK_FALSE(contains(r.out, "MY_VAR"));
  json j = envJson(dir, -1, {{"MASTER_PORT", "29501"}});
  CHECK(j["environment"]["MASTER_PORT"] == "29501");
}

TEST_CASE("env shows the config in effect the way Accelerate's env does", "[env][config]") {
  TempDir dir;
  auto missing = env(dir, -1);
  CHECK(contains(missing.out,
                 "- `accel` default config: " + dir.file("hf/accelerate/default_config.yaml") + "\n\tNot found\n"));
  CHECK(envJson(dir, -1)["config"]["found"] == false);
  dir.write("hf/accelerate/default_config.yaml",
            "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 4\n"
            "deepspeed_config:\n  zero_stage: 3\n  gradient_clipping: 1.0\n");
  auto found = env(dir, -1);
  CHECK(contains(found.out,
                 "\t- compute_environment: LOCAL_MACHINE\n\t- distributed_type: "
                 "DEEPSPEED\n\t- mixed_precision: bf16\n\t- use_cpu: False\n"));
  CHECK(contains(found.out,
                 "\t- deepspeed_config: {'gradient_clipping': 1.0, 'zero_stage': 3}\n"
                 "\t- downcast_bf16: False\n"));
  json config = envJson(dir, -1)["config"];
  CHECK(config["values"]["num_processes"] == 4);
  CHECK(config["passed"] == false);
  std::string other = dir.write("other.yaml", "distributed_type: MULTI_CPU\nnum_processes: 2\n");
  auto passed = env(dir, -1, {"--config-file", other});
  CHECK(contains(passed.out, "- `accel` config passed: " + other + "\n"));
}

TEST_CASE("env with a bad config: report printed, errors named, exit 2", "[env][config]") {
  TempDir dir;
  std::string bad = dir.write("bad.yaml", "distributed_type: MULTI_GPU\nnum_proceses: 2\n");
  auto r = env(dir, -1, {"--config_file", bad});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "- GPUs: none"));
  CHECK(contains(r.out, "\tinvalid: " + bad + ":2:1: unknown key 'num_proceses'\n"));
  CHECK(contains(r.err, "accel: error: " + bad + ":2:1: unknown key 'num_proceses'"));
  auto missing = env(dir, -1, {"--config_file", dir.file("typo.yaml")});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, dir.file("typo.yaml") + ": config file does not exist"));
  CHECK(missing.out.empty());
}
