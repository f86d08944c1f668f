// SPDX-License-Identifier: Apache-2.0
// UTF-8 as Python's strict decoder reads it (no overlong forms, no surrogates, nothing past
// U+10FFFF): config files are read so by Accelerate, and the job channel's JSON must be valid
// UTF-8 whatever a worker printed. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace accel {

// The code point at byte `i` and its length in bytes; length 0 when the bytes there are not UTF-8.
std::pair<unsigned, size_t> decodeUtf8(std::string_view text, size_t i);

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD.
std::string validUtf8(std::string_view text);

// Valid UTF-8 `text` cut to at most `max_bytes`, never inside a character.
std::string_view utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace accel
