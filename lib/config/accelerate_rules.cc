// SPDX-License-Identifier: Apache-2.0
#include "lib/config/accelerate_rules.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/config/schema.h"

namespace accel {

namespace {

std::string at(const Config& c, const Mark& m) {
  return m.line > 0 ? fmt::format("{}:{}:{}", c.path, m.line, m.column) : c.path;
}

void legacyFp16(Config& c, const nlohmann::json& fp16, RuleFindings& out) {
  if (fp16.is_null()) return;
  if (!c.find("mixed_precision") && fp16 == true) {
    c.set("mixed_precision", "fp16");
    out.notes.push_back("converted legacy `fp16: true` to `mixed_precision: fp16`");
  } else {
    out.notes.push_back("dropped legacy key fp16");
  }
}

void legacyDynamo(Config& c, const LegacyKeys& legacy, RuleFindings& out) {
  if (legacy.dynamo_backend.is_null() || c.find("dynamo_config")) return;
  const std::string backend =
      toUpper(legacy.dynamo_backend.is_string() ? legacy.dynamo_backend.get<std::string>() : std::string("NO"));
  const KeySpec& spec = keySpec("dynamo_config.dynamo_backend");
  if (std::find(spec.choices.begin(), spec.choices.end(), backend) == spec.choices.end()) {
    out.problems.push_back({at(c, legacy.dynamo_mark), fmt::format("'{}' is not a valid dynamo_backend", backend),
                            "allowed values: " + join({spec.choices.begin(), spec.choices.end()}, ", ")});
  } else if (backend != "NO") {
    c.set("dynamo_config.dynamo_backend", backend);
  }
  out.notes.push_back("converted legacy top-level dynamo_backend to dynamo_config");
}

void sageMakerRequirements(const Config& c, RuleFindings& out) {
  for (const char* key : {"ec2_instance_type", "iam_role_name"}) {
    if (!c.find(key)) {
      out.errors.push_back({c.path,
                            fmt::format("a SageMaker config (compute_environment AMAZON_SAGEMAKER) needs {}", key),
                            "add it, as `accelerate config` asks for it"});
    }
  }
  if (c.resolved("distributed_type") == "NO") {
    out.errors.push_back({c.where("distributed_type"),
                          "Accelerate 1.15 refuses a SageMaker config with distributed_type NO (its loader then adds "
                          "num_processes, which a SageMaker config cannot have)",
                          "use DATA_PARALLEL or MODEL_PARALLEL, or compute_environment LOCAL_MACHINE"});
  }
}

}  // namespace

RuleFindings applyAccelerateRules(Config& c, const LegacyKeys& legacy) {
  RuleFindings out;
  legacyFp16(c, legacy.fp16, out);
  legacyDynamo(c, legacy, out);
  if (!c.find("distributed_type")) {
    out.errors.push_back({c.path, "distributed_type is required",
                          "add `distributed_type: 'NO'` for one process, MULTI_GPU for several GPUs, or MULTI_CPU for "
                          "CPU workers"});
  } else if (c.sageMaker()) {
    sageMakerRequirements(c, out);
  }
  return out;
}

}  // namespace accel
