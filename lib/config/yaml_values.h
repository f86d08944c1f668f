// SPDX-License-Identifier: Apache-2.0
// The values of a config file as accel and Accelerate see them (the loader's step after
// yaml-cpp, loader.h): free-form ones typed exactly as PyYAML's safe_load types them (what
// Accelerate holds), keyed ones checked against their schema row. A value its row cannot use
// comes back with the reason, for the loader to keep as written and report (Accelerate's own
// loader checks no types). YAML aliases can make a value contain itself or expand
// exponentially ("billion laughs"), or repeat a long string many times: copying values out is
// bounded by depth and by a budget of one unit per value and per byte of text (an alias-free
// file never spends more than twice its size). One reader per file.
#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "lib/config/schema.h"

namespace accel {

class ValueReader {
 public:
  // `json`: a .json file (JSON's number syntax and words apply); `text_size`: the file's.
  ValueReader(bool json, size_t text_size) : json_(json), left_(2 * text_size + 1024) {}

  // Spends the budget for copying `node` (1, and its scalar's bytes); false once it is spent,
  // overflow() then saying where.
  bool charge(const YAML::Node& node);

  // As PyYAML types it; null once the budget or kMaxDepth is exceeded (overflow() says where).
  nlohmann::json untyped(const YAML::Node& node, int depth = 0);
  const std::optional<YAML::Mark>& overflow() const { return overflow_; }

  struct Typed {
    std::optional<nlohmann::json> value;  // null json: the key is not set (`key:` or `key: null`)
    std::string problem, hint;            // set when `value` is absent
    std::string note;                     // a normalisation applied
  };
  // As `spec` types it, in a SageMaker config when `sagemaker`.
  Typed typed(const KeySpec& spec, const YAML::Node& node, const std::string& dotted, bool sagemaker);

  static constexpr int kMaxDepth = 500;  // Accelerate's files nest 3; yaml-cpp reads no deeper either

 private:
  Typed scalar(const KeySpec& spec, const YAML::Node& node, const std::string& dotted, bool sagemaker);
  Typed choice(const KeySpec& spec, const std::string& dotted, const std::string& text, bool sagemaker);
  Typed range(const KeySpec& spec, const std::string& dotted, long long value);
  bool json_;
  size_t left_;
  std::optional<YAML::Mark> overflow_;
};

// A scalar's text. yaml-cpp decodes the escapes \_ and \N to single bytes, not UTF-8.
std::string scalarOf(const YAML::Node& node);
// "a map", "a list", or the scalar quoted.
std::string kindOf(const YAML::Node& node);

}  // namespace accel
