// SPDX-License-Identifier: Apache-2.0
// lib/model/memory_estimate.h and memory_table.h: layers, Accelerate's float32 totals, the
// per-strategy formulas, and the table against the text Accelerate's own code prints for the
// same amounts (estimate.py's create_ascii_table and convert_bytes, run on these numbers).
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/model/memory_estimate.h"
#include "lib/model/memory_table.h"
#include "tests/support/process.h"
#include "tests/support/safetensors_files.h"

using namespace accel;
using accel::test::TempDir;
using accel::test::writeSafetensors;

namespace {

ModelSizes sizesOf(const std::vector<test::FakeTensor>& tensors) {
  TempDir dir;
  writeSafetensors(dir.file("m.safetensors"), tensors);
  return measureModel(readModelFiles(dir.file("m.safetensors")));
}

ModelSizes amounts(uint64_t total_bytes, uint64_t largest_bytes) {
  ModelSizes s;
  s.total.bits = total_bytes * 8;
  s.largest.size.bits = largest_bytes * 8;
  return s;
}

}  // namespace

TEST_CASE("estimate: a layer is a repeated block's prefix, else the tensor's module", "[estimate]") {
  CHECK(layerOf("h.3.attn.c_attn.weight") == "h.3");
  CHECK(layerOf("model.layers.12.self_attn.q_proj.weight") == "model.layers.12");
  CHECK(layerOf("encoder.layer.0.attention.self.query.bias") == "encoder.layer.0");
  CHECK(layerOf("encoder.block.1.layer.0.SelfAttention.q.weight") == "encoder.block.1");
  CHECK(layerOf("wte.weight") == "wte");
  CHECK(layerOf("embeddings.word_embeddings.weight") == "embeddings.word_embeddings");
  CHECK(layerOf("logit_scale") == "logit_scale");
  CHECK(layerOf("0.weight") == "0");  // a number first is a module's name, not a block of a parent
}

TEST_CASE("estimate: totals in float32 terms, integers at their size, BOOL an eighth", "[estimate]") {
  ModelSizes s = sizesOf({{"wte.weight", "F16", {100, 8}},
                          {"h.0.w", "BF16", {8, 8}},
                          {"h.0.b", "F32", {8}},
                          {"h.1.w", "BF16", {8, 8}},
                          {"h.1.b", "F32", {8}},
                          {"pos_ids", "I64", {10}},
                          {"mask", "BOOL", {16}}});
  CHECK(s.tensors == 7);
  CHECK(s.parameters == 800 + 2 * 72);
  CHECK(s.total.bits == 8 * (4 * (800 + 144) + 80) + 16);
  CHECK(s.total.python_float);  // the BOOL makes Accelerate's sum a float
  CHECK(s.stored_bytes == 1600 + 2 * (128 + 32) + 80 + 16);
  CHECK(s.largest.name == "wte");
  CHECK(s.largest.size.bits == 8 * 3200);
  CHECK(s.layers == 5);
  ModelSizes tie = sizesOf({{"h.10.w", "F32", {4}}, {"h.2.w", "F32", {4}}, {"h.9.w", "F32", {4}}});
  CHECK(tie.largest.name == "h.2");  // the first in natural order, as Accelerate takes the first block
  CHECK_FALSE(tie.total.python_float);
}

TEST_CASE("estimate: model states per process under DDP, ZeRO and FSDP", "[estimate]") {
  ModelSizes s;
  s.parameters = 1000;
  s.largest.parameters = 100;
  auto byName = [](const std::vector<StrategyEstimate>& all, const std::string& name) {
    for (const auto& e : all) {
      if (e.name == name) return e.bytes_per_process;
    }
    FAIL(name);
    return uint64_t{0};
  };
  auto mixed = estimateStrategies(s, {8, 2, Precision::Mixed});
  CHECK(byName(mixed, "DDP") == 16000);
  CHECK(byName(mixed, "DeepSpeed ZeRO-1") == 4000 + 12000 / 8);
  CHECK(byName(mixed, "DeepSpeed ZeRO-2") == 2000 + 14000 / 8);
  CHECK(byName(mixed, "DeepSpeed ZeRO-3") == 16000 / 8 + 200);
  CHECK(byName(mixed, "FSDP full shard") == 16000 / 8 + 200);
  CHECK(byName(mixed, "FSDP hybrid shard") == 16000 / 4 + 200);
  auto full = estimateStrategies(s, {1, 1, Precision::Full});
  CHECK(byName(full, "DDP") == 16000);
  CHECK(byName(full, "DeepSpeed ZeRO-3") == 16000 + 400);
  CHECK_THROWS_AS(estimateStrategies(s, {6, 4, Precision::Mixed}), UsageError);
}

TEST_CASE("estimate: convert_bytes as Python prints it", "[estimate]") {
  CHECK(convertBytes(512, true) == "512 bytes");
  CHECK(convertBytes(256, false) == "256.0 bytes");
  CHECK(convertBytes(0.375, false) == "0.38 bytes");
  CHECK(convertBytes(0.625, false) == "0.62 bytes");  // round half to even on the binary value
  CHECK(convertBytes(1024, true) == "1.0 KB");
  CHECK(convertBytes(123456789012.0, true) == "114.98 GB");
  CHECK(convertBytes(987654321, true) == "941.9 MB");
  CHECK(convertBytes(1024.0 * 1024 * 1024 * 1024 * 1024 * 3, true) == "3.0 PB");
}

TEST_CASE("estimate: Accelerate's table, short and long titles", "[estimate]") {
  CHECK(accelerateTable(amounts(5, 3), estimateDtypes(), "ab") ==
        "┌────────────────────────────────────────────────────┐\n"
        "│           Memory Usage for loading `ab`            │\n"
        "├───────┬─────────────┬──────────┬───────────────────┤\n"
        "│ dtype │Largest Layer│Total Size│Training using Adam│\n"
        "├───────┼─────────────┼──────────┼───────────────────┤\n"
        "│float32│   3 bytes   │ 5 bytes  │      20 bytes     │\n"
        "│float16│  1.5 bytes  │2.5 bytes │      10 bytes     │\n"
        "│  int8 │  0.75 bytes │1.25 bytes│        N/A        │\n"
        "│  int4 │  0.38 bytes │0.62 bytes│        N/A        │\n"
        "└───────┴─────────────┴──────────┴───────────────────┘");
  const std::string name = "a-very-long-model-name-that-exceeds-everything-really-long.safetensors";
  const std::string table = accelerateTable(amounts(1000, 1000), {"float32", "int4"}, name);
  CHECK(table.find("│                    Memory Usage for loading `" + name + "`                    │\n") !=
        std::string::npos);
  CHECK(table.find("│float32│  1000 bytes │ 1000 bytes│" + std::string(48, ' ') + "3.91 KB" + std::string(48, ' ') +
                   "│\n") != std::string::npos);
  CHECK(table.find("│  int4 │ 125.0 bytes │125.0 bytes│" + std::string(50, ' ') + "N/A" + std::string(50, ' ') +
                   "│\n") != std::string::npos);
}

TEST_CASE("estimate: --dtypes outside Accelerate's four names them", "[estimate]") {
  CHECK_NOTHROW(checkEstimateDtypes({"int8", "float32"}));
  try {
    checkEstimateDtypes({"float32", "bfloat16"});
    FAIL("accepted bfloat16");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "--dtypes: unknown dtype 'bfloat16'");
    CHECK_THAT(e.hint(), Catch::Matchers::Contains("valid dtypes: float32, float16, int8, int4"));
  }
}
