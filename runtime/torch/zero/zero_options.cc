// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/zero/zero_options.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/error.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

namespace zenv = launch_env;
using Json = nlohmann::json;

bool isTrue(const std::optional<std::string>& v) { return v && (*v == "true" || *v == "True" || *v == "1"); }

std::vector<std::string> splitNames(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

int64_t parseCount(const std::string& text, const char* name) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{}={}: not a whole number", name, text), "give a count of parameters, e.g. 100000000");
}

double parseClip(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format("{}: '{}' is not a gradient clipping value", where, text),
                   "give a maximum norm such as 1.0 (--gradient_clipping)");
}

// An offload device: none or cpu; nvme is DeepSpeed's own (its swapper).
bool offloadDevice(const std::string& device, const std::string& where) {
  if (device == "none" || device.empty()) return false;
  if (device == "cpu") return true;
  if (device == "nvme") {
    throw UsageError(where + ": nvme offload is not supported by accel's libtorch component",
                     "offload to cpu (--offload_optimizer_device cpu / --offload_param_device cpu)");
  }
  throw UsageError(fmt::format("{}: unknown offload device '{}'", where, device), "use none or cpu");
}

// A deepspeed_config_file's settings over the environment's; "auto" keeps the environment's.
void readDeepSpeedFile(const std::string& path, const EnvReader& getenv, ZeroOptions& z) {
  std::ifstream in(path);
  if (!in) {
    throw UsageError(fmt::format("{}={}: cannot be read", zenv::kDeepSpeedConfigFile, path),
                     "give the path of a DeepSpeed JSON config (--deepspeed_config_file)");
  }
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw UsageError(fmt::format("{}: not JSON: {}", path, e.what()), "fix the DeepSpeed config file");
  }
  // A value of another type than DeepSpeed's is said with its key, not left to the JSON
  // library's exception.
  const auto wrong = [&path](const std::string& key, const char* want) {
    return UsageError(fmt::format("{}: {} is not {}", path, key, want), "fix the DeepSpeed config file");
  };
  if (!j.is_object()) throw wrong("the top level", "an object");
  const Json zero = j.value("zero_optimization", Json::object());
  if (!zero.is_object()) throw wrong("zero_optimization", "an object");
  if (zero.contains("stage")) {
    if (!zero["stage"].is_number_integer() || zero["stage"].get<int>() < 0 || zero["stage"].get<int>() > 3) {
      throw UsageError(fmt::format("{}: zero_optimization.stage {} is not 0-3", path, zero["stage"].dump()),
                       "set zero_optimization.stage to 0, 1, 2 or 3");
    }
    z.stage = zero["stage"].get<int>();
  }
  const auto device = [&](const char* key) -> std::optional<std::string> {
    if (!zero.contains(key)) return std::nullopt;
    if (!zero[key].is_object()) throw wrong(std::string("zero_optimization.") + key, "an object");
    if (!zero[key].contains("device")) return std::nullopt;
    if (!zero[key]["device"].is_string()) throw wrong(std::string("zero_optimization.") + key + ".device", "a string");
    return zero[key]["device"].get<std::string>();
  };
  if (auto d = device("offload_optimizer"))
    z.offload_optimizer = offloadDevice(*d, path + ": offload_optimizer.device");
  if (auto d = device("offload_param")) z.offload_params = offloadDevice(*d, path + ": offload_param.device");
  if (j.contains("gradient_clipping")) {
    const Json& clip = j["gradient_clipping"];
    if (clip == "auto") {
      const auto value = getenv(zenv::kGradientClipping);
      if (!value) {
        throw UsageError(path + ": gradient_clipping is \"auto\" and the launch gives no value",
                         "pass --gradient_clipping to accel launch, or write a number in the file");
      }
      z.gradient_clipping = parseClip(*value, zenv::kGradientClipping);
    } else if (clip.is_number()) {
      z.gradient_clipping = clip.get<double>();
    } else {
      throw UsageError(fmt::format("{}: gradient_clipping {} is not a number", path, clip.dump()),
                       "write a maximum norm such as 1.0, or \"auto\"");
    }
  }
}

void readDeepSpeed(const EnvReader& getenv, ZeroOptions& z) {
  z.stage = 2;  // DeepSpeedPlugin's default zero_stage
  if (auto s = getenv(zenv::kDeepSpeedZeroStage)) {
    if (*s != "0" && *s != "1" && *s != "2" && *s != "3") {
      throw UsageError(fmt::format("{}={}: not a ZeRO stage", zenv::kDeepSpeedZeroStage, *s), "use 0, 1, 2 or 3");
    }
    z.stage = std::stoi(*s);
  }
  if (auto d = getenv(zenv::kDeepSpeedOffloadOptimizer))
    z.offload_optimizer = offloadDevice(*d, zenv::kDeepSpeedOffloadOptimizer);
  if (auto d = getenv(zenv::kDeepSpeedOffloadParam)) z.offload_params = offloadDevice(*d, zenv::kDeepSpeedOffloadParam);
  if (auto c = getenv(zenv::kGradientClipping)) z.gradient_clipping = parseClip(*c, zenv::kGradientClipping);
  const auto file = getenv(zenv::kDeepSpeedConfigFile);
  if (file && !file->empty()) readDeepSpeedFile(*file, getenv, z);
  z.source = file && !file->empty() ? "DeepSpeed config " + *file : "DeepSpeed zero_stage";
}

// FSDP 1's ShardingStrategy, by name or by its number (Accelerate accepts both).
int fsdp1Stage(const std::string& strategy, const char* name) {
  if (strategy == "FULL_SHARD" || strategy == "1") return 3;
  if (strategy == "SHARD_GRAD_OP" || strategy == "2") return 2;
  if (strategy == "NO_SHARD" || strategy == "3") return 0;
  if (strategy == "HYBRID_SHARD" || strategy == "_HYBRID_SHARD_ZERO2" || strategy == "4" || strategy == "5") {
    throw UsageError(
        fmt::format("{}={}: hybrid sharding is not supported by accel's libtorch component", name, strategy),
        "use FULL_SHARD or SHARD_GRAD_OP: the component shards over every rank of the job");
  }
  throw UsageError(fmt::format("{}={}: unknown sharding strategy", name, strategy),
                   "use FULL_SHARD, SHARD_GRAD_OP or NO_SHARD");
}

void readFsdp(const EnvReader& getenv, ZeroOptions& z) {
  const std::string version = getenv(zenv::kFsdpVersion).value_or("1");
  if (version != "1" && version != "2") {
    throw UsageError(fmt::format("{}={}: not an FSDP version", zenv::kFsdpVersion, version), "use 1 or 2");
  }
  const auto reshard = getenv(zenv::kFsdpReshardAfterForward);
  if (version == "2") {
    z.stage = !reshard || isTrue(reshard) ? 3 : 2;
  } else if (auto strategy = getenv(zenv::kFsdpShardingStrategy)) {
    z.stage = fsdp1Stage(*strategy, zenv::kFsdpShardingStrategy);
  } else if (reshard && !isTrue(reshard) && *reshard != "false" && *reshard != "False") {
    z.stage = fsdp1Stage(*reshard, zenv::kFsdpReshardAfterForward);
  } else {
    z.stage = !reshard || isTrue(reshard) ? 3 : 2;
  }
  z.offload_params = z.offload_optimizer = isTrue(getenv(zenv::kFsdpOffloadParams));
  const std::string policy = getenv(zenv::kFsdpAutoWrapPolicy).value_or("");
  if (policy == "TRANSFORMER_BASED_WRAP") {
    z.unit_classes = splitNames(getenv(zenv::kFsdpTransformerClsToWrap).value_or(""));
    if (z.unit_classes.empty()) {
      throw UsageError(fmt::format("{}=TRANSFORMER_BASED_WRAP names no class", zenv::kFsdpAutoWrapPolicy),
                       "give the layer classes with --fsdp_transformer_layer_cls_to_wrap");
    }
  } else if (policy == "SIZE_BASED_WRAP") {
    z.unit_min_params = parseCount(getenv(zenv::kFsdpMinNumParams).value_or("100000000"), zenv::kFsdpMinNumParams);
  } else if (!policy.empty() && policy != "NO_WRAP") {
    throw UsageError(fmt::format("{}={}: unknown policy", zenv::kFsdpAutoWrapPolicy, policy),
                     "use TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP");
  }
  z.source = "FSDP_VERSION " + version;
}

}  // namespace

ZeroOptions readZeroOptions(const EnvReader& getenv) {
  ZeroOptions z;
  if (isTrue(getenv(zenv::kUseDeepSpeed))) {
    readDeepSpeed(getenv, z);
  } else if (isTrue(getenv(zenv::kUseFsdp))) {
    readFsdp(getenv, z);
  }
  return z;
}

ZeroOptions readZeroOptions() { return readZeroOptions(processEnvReader()); }

std::string describeStage(int stage) {
  switch (stage) {
    case 0: return "DDP (no sharding)";
    case 1: return "ZeRO stage 1 (optimizer state sharded)";
    case 2: return "ZeRO stage 2 (gradients and optimizer state sharded)";
    default: return "ZeRO stage 3 (parameters, gradients and optimizer state sharded)";
  }
}

}  // namespace accel
