// SPDX-License-Identifier: Apache-2.0
// ZeRO's settings as Accelerate's DeepSpeed and FSDP plugins read them (zero/zero_options.h),
// every refusal with its words, and the unit classes' names (zero/shard_layout.h).
// libtorch first: Debian's is built with glog, whose CHECK would replace Catch's.
#include "runtime/torch/zero/zero_options.h"
#include "runtime/torch/zero/shard_layout.h"
#undef CHECK

#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "lib/common/error.h"
#include "tests/support/process.h"

using accel::readZeroOptions;
using accel::ZeroOptions;

namespace {

ZeroOptions read(const std::map<std::string, std::string>& env) {
  return readZeroOptions([&env](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

std::string refusal(const std::map<std::string, std::string>& env) {
  try {
    read(env);
  } catch (const accel::Error& e) {
    CHECK(e.status() == accel::ExitStatus::Usage);
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("zero options: none without DeepSpeed or FSDP, then DeepSpeed's stage, offload and clipping",
          "[torch][zero]") {
  CHECK(read({}).stage == 0);
  CHECK(read({{"ACCELERATE_USE_DEEPSPEED", "true"}}).stage == 2);  // DeepSpeedPlugin's default
  const ZeroOptions z = read({{"ACCELERATE_USE_DEEPSPEED", "true"},
                              {"ACCELERATE_DEEPSPEED_ZERO_STAGE", "3"},
                              {"ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE", "cpu"},
                              {"ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE", "none"},
                              {"ACCELERATE_GRADIENT_CLIPPING", "1.5"}});
  CHECK(z.stage == 3);
  CHECK(z.offload_optimizer);
  CHECK_FALSE(z.offload_params);
  CHECK(z.gradient_clipping == 1.5);
  CHECK_THAT(refusal({{"ACCELERATE_USE_DEEPSPEED", "true"}, {"ACCELERATE_DEEPSPEED_ZERO_STAGE", "4"}}),
             Catch::Contains("ACCELERATE_DEEPSPEED_ZERO_STAGE=4: not a ZeRO stage"));
  CHECK_THAT(refusal({{"ACCELERATE_USE_DEEPSPEED", "true"}, {"ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE", "nvme"}}),
             Catch::Contains("nvme offload is not supported"));
}

TEST_CASE("zero options: a DeepSpeed config file wins, its auto takes the launch's value", "[torch][zero]") {
  accel::test::TempDir dir;
  const std::string path = dir.path() + "/ds.json";
  std::ofstream(path) << R"({"zero_optimization": {"stage": 1, "offload_optimizer": {"device": "cpu"}},
                             "gradient_clipping": "auto"})";
  const std::map<std::string, std::string> env = {{"ACCELERATE_USE_DEEPSPEED", "true"},
                                                  {"ACCELERATE_DEEPSPEED_ZERO_STAGE", "3"},
                                                  {"ACCELERATE_DEEPSPEED_CONFIG_FILE", path},
                                                  {"ACCELERATE_GRADIENT_CLIPPING", "0.25"}};
  const ZeroOptions z = read(env);
  CHECK(z.stage == 1);
  CHECK(z.offload_optimizer);
  CHECK(z.gradient_clipping == 0.25);
  auto without_clip = env;
  without_clip.erase("ACCELERATE_GRADIENT_CLIPPING");
  CHECK_THAT(refusal(without_clip), Catch::Contains("gradient_clipping is \"auto\" and the launch gives no value"));
  std::ofstream(path) << R"({"zero_optimization": {"offload_param": {"device": 1}}})";
  CHECK_THAT(refusal(env), Catch::Contains("zero_optimization.offload_param.device is not a string"));
  std::ofstream(path) << "[]";
  CHECK_THAT(refusal(env), Catch::Contains("the top level is not an object"));
  std::ofstream(path) << "{not json";
  CHECK_THAT(refusal(env), Catch::Contains(path + ": not JSON"));
  auto missing = env;
  missing["ACCELERATE_DEEPSPEED_CONFIG_FILE"] = dir.path() + "/none.json";
  CHECK_THAT(refusal(missing), Catch::Contains("none.json: cannot be read"));
}

TEST_CASE("zero options: FSDP 1's strategies, FSDP 2's reshard, the wrap policies", "[torch][zero]") {
  const auto fsdp = [](std::map<std::string, std::string> env) {
    env["ACCELERATE_USE_FSDP"] = "true";
    return env;
  };
  CHECK(read(fsdp({{"FSDP_SHARDING_STRATEGY", "FULL_SHARD"}})).stage == 3);
  CHECK(read(fsdp({{"FSDP_SHARDING_STRATEGY", "2"}})).stage == 2);
  CHECK(read(fsdp({{"FSDP_SHARDING_STRATEGY", "NO_SHARD"}})).stage == 0);
  CHECK(read(fsdp({{"FSDP_RESHARD_AFTER_FORWARD", "SHARD_GRAD_OP"}})).stage == 2);  // Accelerate 1.x's spelling
  CHECK(read(fsdp({{"FSDP_VERSION", "2"}, {"FSDP_RESHARD_AFTER_FORWARD", "false"}})).stage == 2);
  CHECK(read(fsdp({{"FSDP_VERSION", "2"}, {"FSDP_RESHARD_AFTER_FORWARD", "true"}})).stage == 3);
  CHECK_THAT(refusal(fsdp({{"FSDP_SHARDING_STRATEGY", "HYBRID_SHARD"}})),
             Catch::Contains("hybrid sharding is not supported"));
  CHECK_THAT(refusal(fsdp({{"FSDP_VERSION", "3"}})), Catch::Contains("FSDP_VERSION=3: not an FSDP version"));
  const ZeroOptions classes = read(fsdp({{"FSDP_AUTO_WRAP_POLICY", "TRANSFORMER_BASED_WRAP"},
                                         {"FSDP_TRANSFORMER_CLS_TO_WRAP", "Block, Decoder"},
                                         {"FSDP_OFFLOAD_PARAMS", "true"}}));
  CHECK(classes.unit_classes == std::vector<std::string>{"Block", "Decoder"});
  CHECK((classes.offload_params && classes.offload_optimizer));
  CHECK(read(fsdp({{"FSDP_AUTO_WRAP_POLICY", "SIZE_BASED_WRAP"}, {"FSDP_MIN_NUM_PARAMS", "1000"}})).unit_min_params ==
        1000);
  CHECK_THAT(refusal(fsdp({{"FSDP_AUTO_WRAP_POLICY", "TRANSFORMER_BASED_WRAP"}})), Catch::Contains("names no class"));
  CHECK_THAT(refusal(fsdp({{"FSDP_AUTO_WRAP_POLICY", "SIZE_BASED_WRAP"}, {"FSDP_MIN_NUM_PARAMS", "many"}})),
             Catch::Contains("FSDP_MIN_NUM_PARAMS=many: not a whole number"));
}

TEST_CASE("zero units: a class named as Accelerate's users name it", "[torch][zero]") {
  CHECK(accel::classMatches("BlockImpl", "Block"));
  CHECK(accel::classMatches("my::ns::BlockImpl", "Block"));
  CHECK(accel::classMatches("torch::nn::LinearImpl", "Linear"));
  CHECK(accel::classMatches("Block", "Block"));
  CHECK_FALSE(accel::classMatches("BlockImpl", "Bloc"));
  CHECK_FALSE(accel::classMatches("Impl", ""));
}
