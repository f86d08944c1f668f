// SPDX-License-Identifier: Apache-2.0
#include "lib/config/readable_text.h"

#include <fmt/format.h>

#include "lib/common/utf8.h"

namespace accel {

namespace {

// PyYAML's Reader.NON_PRINTABLE, inverted.
bool printable(unsigned cp) {
  return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

// Four hex digits, or -1.
long hex4(std::string_view s) {
  long v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

std::string repairYamlCppEscapes(std::string_view scalar) {
  std::string out;
  for (size_t i = 0; i < scalar.size();) {
    auto [cp, length] = decodeUtf8(scalar, i);
    if (length == 0) {  // the text was UTF-8: only those two escapes leave a stray byte
      out += "\xC2";
      out += scalar[i++];
      continue;
    }
    out.append(scalar.substr(i, length));
    i += length;
  }
  return out;
}

std::string combineJsonSurrogates(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    // An escape: "\uD83D\uDE00" becomes one \U escape; any other (a "\\" too) is copied whole.
    if (text[i + 1] == 'u' && text.size() - i >= 12 && text.substr(i + 6, 2) == "\\u") {
      const long hi = hex4(text.substr(i + 2, 4)), lo = hex4(text.substr(i + 8, 4));
      if (hi >= 0xD800 && hi <= 0xDBFF && lo >= 0xDC00 && lo <= 0xDFFF) {
        out += fmt::format("\\U{:08X}", 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
        i += 11;
        continue;
      }
    }
    out += text.substr(i, 2);
    ++i;
  }
  return out;
}

std::optional<UnreadableText> findUnreadableText(std::string_view text, bool json_file) {
  int line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    auto [cp, length] = decodeUtf8(text, i);
    if (length == 0) {
      return UnreadableText{line, column, fmt::format("byte 0x{:02X} is not UTF-8 text", cp)};
    }
    if (!json_file && !printable(cp)) {
      return UnreadableText{line, column, fmt::format("character U+{:04X} is not allowed in a config file", cp)};
    }
    i += length;
    if (cp == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::nullopt;
}

}  // namespace accel
