// SPDX-License-Identifier: Apache-2.0
// The loader's text-level steps before yaml-cpp parses a config file.
// - What PyYAML reads at all: Accelerate opens config files as UTF-8 text and PyYAML's reader
//   refuses control characters (all but tab, LF, CR), U+FFFE/U+FFFF and surrogates. The loader
//   checks the same first, so that accel and Accelerate agree on which files are readable, and
//   no value accel keeps can contain what its writer could not write back.
// - Where yaml-cpp decodes differently from PyYAML and JSON: two YAML escapes, and JSON's
//   surrogate-pair escapes, which yaml-cpp (reading JSON as YAML) does not combine.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace accel {

struct UnreadableText {
  int line = 1;         // 1-based
  int column = 1;       // 1-based, in characters
  std::string message;  // "byte 0xFD is not UTF-8", "character U+0000 is not allowed …"
};

// The first place where `text` is not what PyYAML reads, or nullopt. (A UTF-8 byte order mark,
// U+FEFF, is printable to PyYAML too.) A .json file (`json_file`) is read by Python's json,
// which takes any UTF-8 text (its syntax forbids raw control characters in strings itself).
std::optional<UnreadableText> findUnreadableText(std::string_view text, bool json_file = false);

// `scalar` as yaml-cpp decoded it from valid UTF-8 text, with the two escapes it decodes to single
// bytes ("\_" to 0xA0, "\N" to 0x85; every other escape comes out as UTF-8) made UTF-8 again.
std::string repairYamlCppEscapes(std::string_view scalar);

// JSON text with every surrogate-pair escape ("\ud83d\ude00": how json.dumps, Accelerate's
// writer and accel's own, write a character past U+FFFF) turned into the YAML escape for the same
// character ("\U0001F600"), which yaml-cpp reads (it refuses surrogate escapes). Other text is
// unchanged; a lone surrogate stays, and yaml-cpp reports it.
std::string combineJsonSurrogates(std::string_view text);

}  // namespace accel
