// SPDX-License-Identifier: Apache-2.0
// PyYAML's (YAML 1.1) rules for plain scalars: how a reader types them (how a writer must quote
// them: yaml_quoting.h). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

enum class ScalarKind { Null, Bool, Int, Float, Timestamp, Special, String };

struct ResolvedScalar {
  ScalarKind kind = ScalarKind::String;
  bool boolean = false;
  long long integer = 0;
  double real = 0;
};

// Types an unquoted scalar exactly as PyYAML's SafeLoader does: "NO" and "off" are booleans,
// "0x1f" and "017" are integers, "1e8" is a string (YAML 1.1 floats need a dot), "" is null.
ResolvedScalar resolvePlainScalar(std::string_view text);
// Whether PyYAML's int resolver matches `text`, also where no 64-bit integer holds its value
// (resolvePlainScalar then keeps it a string; a writer must still quote it).
bool matchesYamlInt(std::string_view text);

// True for a JSON number token ("1e-05", "-2", "0.5"); in .json files these are numbers even
// where YAML 1.1 would read a string.
bool isJsonNumber(std::string_view text);

// "(false, true, false)" or "false,true,false": a tuple of booleans as text, the form
// Accelerate's example configs give fp8_config.override_linear_precision; nullopt for other text.
std::optional<std::vector<bool>> booleanTuple(std::string_view text);

}  // namespace accel
