// SPDX-License-Identifier: Apache-2.0
#include "lib/config/yaml_quoting.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lib/common/strings.h"
#include "lib/config/yaml_scalar.h"

namespace accel {

namespace {

bool isLineBreak(char c) { return c == '\n'; }
bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0'; }

struct Analysis {
  bool allow_block_plain = true;
  bool allow_single_quoted = true;
};

// PyYAML's Emitter.analyze_scalar, for block context and allow_unicode=False (safe_dump's
// default): any byte outside printable ASCII forces double quotes.
Analysis analyze(std::string_view s) {
  bool block_indicators = startsWith(s, "---") || startsWith(s, "...");
  bool line_breaks = false, special = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false,
       break_space = false, space_break = false;
  bool previous_space = false, previous_break = false;
  bool preceded_by_whitespace = true;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    bool followed_by_whitespace = i + 1 >= s.size() || isBlank(s[i + 1]);
    if (i == 0) {
      if (std::string_view("#,[]{}&*!|>'\"%@`").find(ch) != std::string_view::npos) {
        block_indicators = true;
      }
      if ((ch == '?' || ch == ':' || ch == '-') && followed_by_whitespace) block_indicators = true;
    } else {
      if (ch == ':' && followed_by_whitespace) block_indicators = true;
      if (ch == '#' && preceded_by_whitespace) block_indicators = true;
    }
    if (isLineBreak(ch)) line_breaks = true;
    if (!(ch == '\n' || (ch >= 0x20 && ch <= 0x7E))) special = true;
    if (ch == ' ') {
      if (i == 0) leading_space = true;
      if (i + 1 == s.size()) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (isLineBreak(ch)) {
      if (i == 0) leading_break = true;
      if (i + 1 == s.size()) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = previous_break = false;
    }
    preceded_by_whitespace = isBlank(ch);
  }
  Analysis a;
  if (leading_space || leading_break || trailing_space || trailing_break || line_breaks || block_indicators) {
    a.allow_block_plain = false;
  }
  if (break_space || space_break || special) a.allow_block_plain = a.allow_single_quoted = false;
  // PyYAML folds multi-line single-quoted scalars; accel writes them double-quoted instead,
  // which every YAML reader reads back as the same string.
  if (line_breaks) a.allow_single_quoted = false;
  return a;
}

// Decodes one UTF-8 sequence starting at s[i]; invalid bytes decode as themselves.
unsigned decodeUtf8(std::string_view s, size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  if (extra == 0 || i + extra >= s.size()) {
    ++i;
    return c;
  }
  unsigned cp = c & (0x3Fu >> extra);
  for (size_t k = 1; k <= extra; ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  }
  i += extra + 1;
  return cp;
}

std::string escaped(unsigned cp) {
  const char* named = nullptr;
  switch (cp) {
    case 0x00: named = "0"; break;
    case 0x07: named = "a"; break;
    case 0x08: named = "b"; break;
    case 0x09: named = "t"; break;
    case 0x0A: named = "n"; break;
    case 0x0B: named = "v"; break;
    case 0x0C: named = "f"; break;
    case 0x0D: named = "r"; break;
    case 0x1B: named = "e"; break;
    case '"': named = "\""; break;
    case '\\': named = "\\"; break;
    case 0x85: named = "N"; break;
    case 0xA0: named = "_"; break;
    case 0x2028: named = "L"; break;
    case 0x2029: named = "P"; break;
    default: break;
  }
  if (named) return std::string("\\") + named;
  char buffer[16];
  if (cp <= 0xFF) {
    std::snprintf(buffer, sizeof buffer, "\\x%02X", cp);
  } else if (cp <= 0xFFFF) {
    std::snprintf(buffer, sizeof buffer, "\\u%04X", cp);
  } else {
    std::snprintf(buffer, sizeof buffer, "\\U%08X", cp);
  }
  return buffer;
}

bool writtenAsIs(unsigned cp) { return cp >= 0x20 && cp <= 0x7E && cp != '"' && cp != '\\'; }

constexpr int kBestWidth = 80;  // PyYAML's default line width

// PyYAML's write_double_quoted: escapes for all but printable ASCII, and past the width a break
// at a space or an escape, written as `\` + line break + indentation (a space that would start
// the next line escaped too). Positions count characters, as Python's do.
std::string doubleQuoted(std::string_view s, int column, int indent) {
  std::vector<unsigned> text;
  for (size_t i = 0; i < s.size();) text.push_back(decodeUtf8(s, i));
  auto ascii = [&](size_t from, size_t to) {
    std::string out;
    for (size_t k = from; k < to; ++k) out += static_cast<char>(text[k]);
    return out;
  };
  std::string out = "\"";
  int col = column + 1;
  size_t start = 0;
  for (size_t end = 0; end <= text.size(); ++end) {
    const bool at_end = end == text.size();
    if (at_end || !writtenAsIs(text[end])) {
      if (start < end) out += ascii(start, end);
      col += static_cast<int>(end > start ? end - start : 0);
      start = std::max(start, end);
      if (!at_end) {
        const std::string escape = escaped(text[end]);
        out += escape;
        col += static_cast<int>(escape.size());
        start = end + 1;
      }
    }
    const bool space = !at_end && text[end] == ' ';
    const int pending = static_cast<int>(end) - static_cast<int>(start);  // -1 right after an escape, as in PyYAML
    if (column >= 0 && end > 0 && end + 1 < text.size() && (space || start >= end) && col + pending > kBestWidth) {
      out += ascii(start, end) + "\\\n" + std::string(static_cast<size_t>(indent), ' ');
      start = std::max(start, end);
      col = indent;
      if (text[start] == ' ') {
        out += "\\";
        ++col;
      }
    }
  }
  return out + "\"";
}

// PyYAML's write_plain / write_single_quoted folding: a single space after a word that ends
// past the width becomes a line break plus indentation. `quoted` adds the single-quote rules.
std::string fold(std::string_view text, int column, int indent, bool quoted) {
  std::string out;
  int col = column;
  bool spaces = false;
  size_t start = 0;
  for (size_t end = 0; end <= text.size(); ++end) {
    const bool at_end = end == text.size();
    const char ch = at_end ? '\0' : text[end];
    if (spaces) {
      if (at_end || ch != ' ') {
        bool may_break = start + 1 == end && col > kBestWidth && column >= 0 && (!quoted || (start != 0 && !at_end));
        if (may_break) {
          out += "\n" + std::string(static_cast<size_t>(indent), ' ');
          col = indent;
        } else {
          out.append(text.substr(start, end - start));
          col += static_cast<int>(end - start);
        }
        start = end;
      }
    } else if (at_end || ch == ' ' || (quoted && ch == '\'')) {
      out.append(text.substr(start, end - start));
      col += static_cast<int>(end - start);
      start = end;
    }
    if (quoted && ch == '\'') {
      out += "''";
      col += 2;
      start = end + 1;
    }
    if (!at_end) spaces = ch == ' ';
  }
  return out;
}

}  // namespace

std::string formatYamlString(std::string_view text, int column, int indent) {
  Analysis a = analyze(text);
  // matchesInt too: "0b_" or a 20-digit number resolve as int in PyYAML even where no int fits.
  bool reads_back_as_string = resolvePlainScalar(text).kind == ScalarKind::String && !matchesYamlInt(text);
  if (reads_back_as_string && a.allow_block_plain && !text.empty()) {
    return fold(text, column, indent, false);
  }
  if (a.allow_single_quoted) {
    return "'" + fold(text, column < 0 ? column : column + 1, indent, true) + "'";
  }
  return doubleQuoted(text, column, indent);
}

std::string formatYamlFloat(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  std::string repr = toLower(pythonFloatRepr(value));
  if (repr.find('.') == std::string::npos && repr.find('e') != std::string::npos) {
    repr.replace(repr.find('e'), 1, ".0e");
  }
  return repr;
}

}  // namespace accel
