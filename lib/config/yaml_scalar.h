// SPDX-License-Identifier: Apache-2.0
// PyYAML's (YAML 1.1) rules for plain scalars: how a reader types them and how a writer must
// quote strings so that Accelerate's `yaml.safe_load` reads back exactly what accel wrote.
// Pure functions; thread-safe.
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

// Writes a string value as PyYAML's safe_dump would: plain when that reads back as the same
// string, else 'single-quoted', else "double-quoted" with escapes. A value placed at `column`
// is folded at spaces past column 80 onto lines indented by `indent`, as PyYAML does; keys
// (column < 0) are never folded.
std::string formatYamlString(std::string_view text, int column = -1, int indent = 0);

// True for a JSON number token ("1e-05", "-2", "0.5"); in .json files these are numbers even
// where YAML 1.1 would read a string.
bool isJsonNumber(std::string_view text);

// "(false, true, false)" or "false,true,false": a tuple of booleans as text, the form
// Accelerate's example configs give fp8_config.override_linear_precision; nullopt for other text.
std::optional<std::vector<bool>> booleanTuple(std::string_view text);

// Writes a float as PyYAML does: repr() plus ".0" before a bare exponent; .inf/.nan.
std::string formatYamlFloat(double value);

}  // namespace accel
