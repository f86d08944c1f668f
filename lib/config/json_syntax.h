// SPDX-License-Identifier: Apache-2.0
// Whether a .json config is JSON the way Python's json.load reads it: Accelerate opens .json
// configs with it, so accel accepts a file's syntax exactly when json.load does and refuses the
// rest with the first problem's line and column. That is standard JSON (RFC 8259) plus what
// Python adds: the words NaN, Infinity and -Infinity, duplicate keys (the last wins) and lone
// surrogate escapes; minus what it refuses: a byte order mark, and nesting deeper than its
// recursion limit (accel: kMaxJsonDepth, where yaml-cpp, which reads the values, stops too;
// Python 3.11 stops near 1000 levels). The syntax of a lone surrogate escape passes here, but
// the loader refuses its value: yaml-cpp cannot hold it, nor can UTF-8 text. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace accel {

inline constexpr int kMaxJsonDepth = 500;

struct JsonSyntaxError {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
  std::string message;
  std::string hint;
};

// The first syntax error of `text`, or nullopt when json.load would read it.
std::optional<JsonSyntaxError> checkJsonSyntax(std::string_view text);

}  // namespace accel
