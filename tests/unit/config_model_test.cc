// SPDX-License-Identifier: Apache-2.0
// The schema, loader and writer without the CLI: typing, normalisation, round trips.
#include <catch2/catch.hpp>

#include <filesystem>

#include "lib/config/loader.h"
#include "lib/config/schema.h"
#include "lib/config/writer.h"
#include "tests/support/process.h"

using namespace accel;
using nlohmann::json;

namespace {

LoadResult parse(const std::string& text) { return parseConfigText(text, "t.yaml"); }

}  // namespace

TEST_CASE("schema: every row is well formed", "[schema]") {
  for (const auto& spec : configSchema()) {
    INFO(spec.path);
    CHECK_FALSE(spec.help.empty());
    std::string path(spec.path);
    if (auto dot = path.rfind('.'); dot != std::string::npos) {
      REQUIRE(findKey(path.substr(0, dot)) != nullptr);
      CHECK(findKey(path.substr(0, dot))->type == ValueType::Map);
    }
    if (spec.type == ValueType::Enum) {
      CHECK_FALSE(spec.choices.empty());
      json d = wizardDefault(spec);
      if (d.is_string()) {
        CHECK(std::find(spec.choices.begin(), spec.choices.end(), d.get<std::string>()) != spec.choices.end());
      }
    }
    if (spec.type == ValueType::Int) {
      json d = wizardDefault(spec);
      if (!d.is_null()) CHECK((d.get<long long>() >= spec.min && d.get<long long>() <= spec.max));
    }
    CHECK(findKey(spec.path) == &spec);  // no duplicate rows
  }
}

TEST_CASE("loader: schema types values, untyped values follow PyYAML", "[loader]") {
  auto r = parse(
      "distributed_type: NO\nmixed_precision: no\ngpu_ids: 1\nmain_process_ip: 10.0.0.1\n"
      "megatron_lm_config:\n  megatron_lm_tp_degree: 2\n  megatron_lm_custom: on\n"
      "fp8_config:\n  override_linear_precision: [false, yes, 'no']\n"
      "deepspeed_config:\n  gradient_clipping: 1\n");
  REQUIRE(r.errors.empty());
  const Config& c = r.config;
  CHECK(*c.find("distributed_type") == "NO");
  CHECK(*c.find("mixed_precision") == "no");
  CHECK(*c.find("gpu_ids") == "1");
  CHECK(*c.find("main_process_ip") == "10.0.0.1");
  CHECK(*c.find("megatron_lm_config.megatron_lm_custom") == true);
  CHECK(*c.find("fp8_config.override_linear_precision") == json({false, true, "no"}));
  CHECK(c.find("deepspeed_config.gradient_clipping")->is_number_integer());
  CHECK(c.marks.at("main_process_ip").line == 4);
  CHECK(c.marks.at("megatron_lm_config.megatron_lm_tp_degree").column == 3);
}

TEST_CASE("loader: legacy and misnamed keys are converted with a note", "[loader]") {
  auto r = parse(
      "distributed_type: FSDP\nnum_processes: 2\nfp16: true\ndynamo_backend: 'NO'\n"
      "fsdp_config:\n  sharding_strategy: FULL_SHARD\n"
      "fp8_config:\n  amax_history_length: 16\n  optimization_level: O1\n");
  REQUIRE(r.errors.empty());
  CHECK(*r.config.find("mixed_precision") == "fp16");
  CHECK(r.config.find("fp16") == nullptr);
  CHECK(r.config.find("dynamo_config") == nullptr);  // dynamo_backend NO means no dynamo
  CHECK(*r.config.find("fsdp_config.fsdp_sharding_strategy") == "FULL_SHARD");
  CHECK(*r.config.find("fp8_config.amax_history_len") == 16);
  CHECK(*r.config.find("fp8_config.opt_level") == "O1");
  CHECK(r.notes.size() == 5);
}

TEST_CASE("loader: null means unset and num_processes -1 means decide at launch", "[loader]") {
  auto r = parse(
      "distributed_type: MULTI_GPU\nnum_processes: -1\ngpu_ids:\nmain_process_ip: ~\n"
      "fsdp_config: {}\n");
  REQUIRE(r.errors.empty());
  CHECK(r.config.find("num_processes") == nullptr);
  CHECK(r.config.find("gpu_ids") == nullptr);
  CHECK(r.config.find("main_process_ip") == nullptr);
  CHECK(toYaml(r.config.values) == "distributed_type: MULTI_GPU\n");  // empty map dropped
}

TEST_CASE("loader: JSON is read with positions", "[loader]") {
  auto r = parseConfigText("{\n  \"distributed_type\": \"NO\",\n  \"num_proceses\": 1\n}\n", "c.json");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].where == "c.json:3:3");
  CHECK(r.errors[0].hint == "did you mean 'num_processes'?");
}

TEST_CASE("writer: nested maps, lists and empty values as PyYAML writes them", "[writer]") {
  json v = {{"b", {{"z", 1}, {"a", json::array({true, "x"})}}},
            {"a", "NO"},
            {"c", nullptr},
            {"d", json::object()},
            {"e", json::array()},
            {"f", 0.5}};
  CHECK(toYaml(v) == "a: 'NO'\nb:\n  a:\n  - true\n  - x\n  z: 1\ne: []\nf: 0.5\n");
  CHECK(toJson(v) ==
        "{\n  \"a\": \"NO\",\n  \"b\": {\n    \"a\": [\n      true,\n      \"x\"\n"
        "    ],\n    \"z\": 1\n  },\n  \"e\": [],\n  \"f\": 0.5\n}\n");
}

TEST_CASE("round trip: write, load, write is byte-identical", "[writer][roundtrip]") {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* dir : {ACCEL_SOURCE_DIR "/config-templates", ACCEL_SOURCE_DIR "/tests/golden"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::string ext = entry.path().extension().string();
      if (ext == ".yaml" || ext == ".yml" || ext == ".json") files.push_back(entry.path().string());
    }
  }
  REQUIRE(files.size() >= 6);
  for (const auto& file : files) {
    INFO(file);
    std::string text = test::slurp(file);
    auto first = parseConfigText(text, file);
    REQUIRE(first.errors.empty());
    std::string written = serializeConfig(first.config.values, file);
    auto second = parseConfigText(written, file);
    REQUIRE(second.errors.empty());
    CHECK(serializeConfig(second.config.values, file) == written);
    CHECK(written == text);  // the checked-in files are canonical already
  }
}

TEST_CASE("writer: long values fold at column 80 exactly as PyYAML folds them", "[writer]") {
  // Expected text produced by PyYAML 6 yaml.safe_dump on the same dict.
  json v = {{"fsdp_config",
             {{"fsdp_transformer_layer_cls_to_wrap",
               "BertLayer, BertEmbeddings, BertSelfOutput, BertIntermediate, BertOutput, "
               "BertPooler"}}},
            {"commands",
             {"echo one two three four five six seven eight nine ten eleven twelve "
              "thirteen fourteen"}},
            {"q",
             "it's a long quoted value: with colon space and more words to pass the eighty "
             "column limit ok"}};
  CHECK(toYaml(v) ==
        "commands:\n- echo one two three four five six seven eight nine ten eleven twelve "
        "thirteen fourteen\nfsdp_config:\n  fsdp_transformer_layer_cls_to_wrap: BertLayer, "
        "BertEmbeddings, BertSelfOutput, BertIntermediate,\n    BertOutput, BertPooler\nq: "
        "'it''s a long quoted value: with colon space and more words to pass the eighty\n  "
        "column limit ok'\n");
  json cfg = {{"distributed_type", "NO"},
              {"commands", v["commands"]},
              {"fsdp_config", v["fsdp_config"]},
              {"main_process_ip", v["q"]}};
  auto back = parseConfigText(toYaml(cfg), "t.yaml");  // folded lines read back unchanged
  REQUIRE(back.errors.empty());
  CHECK(back.config.values == cfg);
}

TEST_CASE("loader: JSON number syntax applies in .json files only", "[loader]") {
  auto j = parseConfigText(
      "{\"distributed_type\": \"NO\", \"deepspeed_config\": "
      "{\"gradient_clipping\": 1e-05}}",
      "c.json");
  REQUIRE(j.errors.empty());
  CHECK(*j.config.find("deepspeed_config.gradient_clipping") == 1e-05);
  auto y = parseConfigText("distributed_type: 'NO'\ndeepspeed_config:\n  gradient_clipping: 1e-05\n", "c.yaml");
  // PyYAML reads 1e-05 as a string; so does accel in YAML, kept as written, and no launch uses it.
  REQUIRE(y.errors.empty());
  REQUIRE(y.problems.size() == 1);
  CHECK(y.problems[0].where == "c.yaml:3:22");
  CHECK(*y.config.find("deepspeed_config.gradient_clipping") == "1e-05");
}
