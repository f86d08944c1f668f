// SPDX-License-Identifier: Apache-2.0
// `accel estimate-memory` through the real binary: Accelerate's table for a known file, sharded
// and Hugging Face directories, the per-process figures against a fake GPU (tests/fakes), and
// each bad input's error with exit 2.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/safetensors_files.h"

using accel::test::accelBinary;
using accel::test::contains;
using accel::test::fakeNvmlLibrary;
using accel::test::FakeTensor;
using accel::test::TempDir;
using accel::test::writeRawSafetensors;
using accel::test::writeSafetensors;
using nlohmann::json;

namespace {

// `accel estimate-memory ARGS` with `gpus` fake H100s (80 GiB each), or no GPU library at all.
accel::test::RunResult estimate(const TempDir& dir, std::vector<std::string> args, int gpus = -1) {
  std::map<std::string, std::string> vars = {
      {"HF_HOME", dir.file("hf")},
      {"ACCEL_NVML_LIBRARY", gpus < 0 ? dir.file("no-nvml.so") : fakeNvmlLibrary()},
      {"ACCEL_CUDA_LIBRARY", dir.file("no-cuda.so")},
      {"FAKE_NVML_GPUS", std::to_string(std::max(gpus, 0))},
      {"CUDA_VISIBLE_DEVICES", ""}};
  args.insert(args.begin(), {accelBinary(), "estimate-memory"});
  return accel::test::run(args, {}, vars);
}

// A GPT-2-like model: 1000 x 64 embedding, two blocks of 64 x 192 + 192, a float16 norm.
const std::vector<FakeTensor> kSmall = {{"wte.weight", "F32", {1000, 64}}, {"h.0.attn.weight", "F32", {64, 192}},
                                        {"h.0.attn.bias", "F32", {192}},   {"h.1.attn.weight", "F32", {64, 192}},
                                        {"h.1.attn.bias", "F32", {192}},   {"ln_f.weight", "F16", {64}},
                                        {"ln_f.bias", "F16", {64}}};

// Writes `tensors` as shards of `per_shard` tensors with an index, as save_pretrained does.
void writeSharded(const TempDir& dir, const std::string& sub, const std::vector<FakeTensor>& tensors,
                  size_t per_shard) {
  std::filesystem::create_directories(dir.file(sub));
  json map = json::object();
  size_t count = (tensors.size() + per_shard - 1) / per_shard;
  for (size_t s = 0; s < count; ++s) {
    std::string name = "model-0000" + std::to_string(s + 1) + "-of-0000" + std::to_string(count) + ".safetensors";
    std::vector<FakeTensor> part(tensors.begin() + s * per_shard,
                                 tensors.begin() + std::min(tensors.size(), (s + 1) * per_shard));
    writeSafetensors(dir.file(sub + "/" + name), part);
    for (const auto& t : part) map[t.name] = name;
  }
  dir.write(sub + "/model.safetensors.index.json",
            json({{"metadata", {{"total_size", 0}}}, {"weight_map", map}}).dump());
}

void requireUsageError(const accel::test::RunResult& r, const std::string& message) {
  INFO(r.out + r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("accel: error: ", 0) == 0);
  CHECK(contains(r.err, message));
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("estimate-memory prints Accelerate's table for a small file", "[estimate]") {
  TempDir dir;
  writeSafetensors(dir.file("small.safetensors"), kSmall, {{"format", "pt"}});
  auto r = estimate(dir, {dir.file("small.safetensors")});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Accelerate's create_ascii_table and convert_bytes give these cells for 356352 and 256000 bytes;
  // the title (the temporary path) widens only the last column (tests/unit/memory_estimate_test.cc
  // checks whole tables).
  for (const std::string row : {"│ dtype │Largest Layer│Total Size│  ", "│float32│   250.0 KB  │ 348.0 KB │  ",
                                "│float16│   125.0 KB  │ 174.0 KB │  ", "│  int8 │   62.5 KB   │ 87.0 KB  │  ",
                                "│  int4 │   31.25 KB  │ 43.5 KB  │  "}) {
    CHECK(contains(r.out, "\n" + row));
  }
  for (const std::string last : {" Training using Adam ", " 1.36 MB ", " 696.0 KB ", " N/A "}) {
    CHECK(contains(r.out, last));
  }
  CHECK(contains(r.out, "Memory Usage for loading `" + dir.file("small.safetensors") + "`"));
  CHECK(contains(r.out, "89088 parameters in 7 tensors; largest layer `wte` (64000 parameters)\n"));
  CHECK(contains(r.out, "  DDP                   1.36 MB\n"));
  CHECK(contains(r.out, "GPUs: none ("));
  CHECK(contains(r.out, "so whether it fits is not checked\n"));
  auto two = estimate(dir, {dir.file("small.safetensors"), "--dtypes", "int8", "float16"});
  CHECK(contains(two.out, "\n│  int8 │   62.5 KB   │ 87.0 KB  │  "));
  CHECK_FALSE(contains(two.out, "float32"));
}

TEST_CASE("estimate-memory reads sharded and Hugging Face directories alike", "[estimate]") {
  TempDir dir;
  writeSafetensors(dir.file("one.safetensors"), kSmall);
  writeSharded(dir, "sharded", kSmall, 3);
  std::filesystem::create_directories(dir.file("hf"));
  writeSafetensors(dir.file("hf/model.safetensors"), kSmall);
  dir.write("hf/config.json", "{}");
  json one = json::parse(estimate(dir, {dir.file("one.safetensors"), "--json"}).out);
  for (const std::string path : {"sharded", "sharded/model.safetensors.index.json", "hf"}) {
    auto r = estimate(dir, {dir.file(path), "--json"});
    INFO(path << r.err);
    REQUIRE(r.exit_code == 0);
    json j = json::parse(r.out);
    CHECK(j["total_bytes"] == 356352);
    CHECK(j["largest_layer"] == one["largest_layer"]);
    CHECK(j["dtypes"] == one["dtypes"]);
  }
  json sharded = json::parse(estimate(dir, {dir.file("sharded"), "--json"}).out);
  CHECK(sharded["files"].size() == 3);
  CHECK(sharded["index"] == dir.file("sharded/model.safetensors.index.json"));
}

TEST_CASE("estimate-memory says what fits on the visible GPUs", "[estimate]") {
  TempDir dir;
  // 10 billion float32 parameters in 40 blocks; the data is a hole, so the file costs no disk.
  std::vector<FakeTensor> big;
  for (int i = 0; i < 40; ++i) big.push_back({"model.layers." + std::to_string(i) + ".w", "BF16", {250'000'000}});
  writeSafetensors(dir.file("big.safetensors"), big);
  auto r = estimate(dir, {dir.file("big.safetensors")}, 8);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "8 process(es) on 1 machine(s), mixed precision (2 + 2 + 12 bytes per parameter"));
  CHECK(contains(r.out, "  DDP                 149.01 GB  does not fit\n"));
  CHECK(contains(r.out, "  DeepSpeed ZeRO-3     19.09 GB  fits\n"));
  CHECK(contains(r.out, "GPUs: 8 visible, the smallest NVIDIA H100 80GB HBM3 with 80.0 GB\n"));
  json j = json::parse(
      estimate(dir, {dir.file("big.safetensors"), "--json", "--num_processes", "16", "--num_machines", "2"}, 8).out);
  CHECK(j["training"]["processes"] == 16);
  CHECK(j["training"]["strategies"][5] == json({{"name", "FSDP hybrid shard"},
                                                {"bytes_per_process", 160'000'000'000ull / 8 + 500'000'000},
                                                {"fits", true}}));
  CHECK(j["training"]["strategies"][0]["fits"] == false);
  json none = json::parse(estimate(dir, {dir.file("big.safetensors"), "--json"}).out);
  CHECK(none["training"]["processes"] == 1);
  CHECK(none["training"]["strategies"][0]["fits"].is_null());
  CHECK(none["gpus"]["count"] == 0);
}

TEST_CASE("estimate-memory on bad input: a clear error and exit 2", "[estimate]") {
  TempDir dir;
  requireUsageError(estimate(dir, {dir.file("nope")}), dir.file("nope") + ": no such file or directory");
  dir.write("short.safetensors", "abc");
  requireUsageError(estimate(dir, {dir.file("short.safetensors")}),
                    dir.file("short.safetensors") + ": byte 3: truncated: 3 bytes, shorter than the 8-byte");
  writeRawSafetensors(dir.file("cut.safetensors"), "{}", 0);
  std::filesystem::resize_file(dir.file("cut.safetensors"), 9);
  requireUsageError(estimate(dir, {dir.file("cut.safetensors")}),
                    dir.file("cut.safetensors") +
                        ": byte 9: truncated: the header length at byte 0 says the header "
                        "ends at byte 10, the file ends at byte 9");
  writeRawSafetensors(dir.file("json.safetensors"), "{\"a\": [1,,]}", 0);
  requireUsageError(estimate(dir, {dir.file("json.safetensors")}),
                    dir.file("json.safetensors") + ": byte 17: the header is not JSON: ");
  writeRawSafetensors(dir.file("past.safetensors"), R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})",
                      4);
  requireUsageError(estimate(dir, {dir.file("past.safetensors")}),
                    dir.file("past.safetensors") + ": byte 9: tensor 'w': data_offsets [0, 16] end at file byte");
  writeRawSafetensors(
      dir.file("overlap.safetensors"),
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
      12);
  requireUsageError(estimate(dir, {dir.file("overlap.safetensors")}),
                    "tensor 'b': data_offsets [4, 12] overlap those of 'a' [0, 8]");
  writeRawSafetensors(dir.file("dtype.safetensors"), R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 1]}})",
                      1);
  auto dtype = estimate(dir, {dir.file("dtype.safetensors")});
  requireUsageError(dtype, dir.file("dtype.safetensors") + ": byte 9: tensor 'w': unknown dtype \"Q4\"");
  CHECK(contains(dtype.err, "accel: hint: safetensors dtypes: BOOL, U8, I8"));
  writeSharded(dir, "sharded", kSmall, 3);
  std::filesystem::remove(dir.file("sharded/model-00002-of-00003.safetensors"));
  requireUsageError(estimate(dir, {dir.file("sharded")}), dir.file("sharded/model.safetensors.index.json") +
                                                              ": shard 'model-00002-of-00003.safetensors' (holding '");
  std::filesystem::create_directories(dir.file("empty"));
  dir.write("empty/pytorch_model.bin", "x");
  requireUsageError(estimate(dir, {dir.file("empty")}), dir.file("empty") + ": no safetensors model in this directory");
  writeSafetensors(dir.file("ok.safetensors"), kSmall);
  auto dtypes = estimate(dir, {dir.file("ok.safetensors"), "--dtypes", "float32", "bf16"});
  requireUsageError(dtypes, "--dtypes: unknown dtype 'bf16'");
  CHECK(contains(dtypes.err, "valid dtypes: float32, float16, int8, int4"));
  requireUsageError(estimate(dir, {dir.file("ok.safetensors"), "--num_processes", "3", "--num_machines", "2"}),
                    "--num_processes 3 is not a multiple of --num_machines 2");
}

TEST_CASE("estimate-memory reads a 100 GB model's header in well under a second", "[estimate]") {
  TempDir dir;
  std::vector<FakeTensor> huge;
  for (int i = 0; i < 100; ++i) huge.push_back({"layers." + std::to_string(i) + ".w", "BF16", {500'000'000}});
  writeSafetensors(dir.file("huge.safetensors"), huge);
  auto start = std::chrono::steady_clock::now();
  auto r = estimate(dir, {dir.file("huge.safetensors"), "--json"});
  CHECK(accel::test::secondsSince(start) < 1.0);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["stored_bytes"] == 100'000'000'000ull);
}
