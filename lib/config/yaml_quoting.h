// SPDX-License-Identifier: Apache-2.0
// Writing scalars as PyYAML's safe_dump does, so that Accelerate's `yaml.safe_load` reads back
// exactly what accel wrote (the reading rules are yaml_scalar.h's). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace accel {

// Writes a string value as PyYAML's safe_dump would: plain when that reads back as the same
// string, else 'single-quoted', else "double-quoted" with escapes. A value placed at `column`
// is folded at spaces past column 80 onto lines indented by `indent`, as PyYAML does; keys
// (column < 0) are never folded.
std::string formatYamlString(std::string_view text, int column = -1, int indent = 0);

// Writes a float as PyYAML does: repr() plus ".0" before a bare exponent; .inf/.nan.
std::string formatYamlFloat(double value);

}  // namespace accel
