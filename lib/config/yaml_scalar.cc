// SPDX-License-Identifier: Apache-2.0
#include "lib/config/yaml_scalar.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "lib/common/strings.h"

namespace accel {

namespace {

// PyYAML 6's implicit resolvers (resolver.py), hand-matched: std::regex would cost
// milliseconds of start-up to compile them, on every accel command.
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A cursor over the scalar; each eat* consumes on success only.
struct Scan {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i == s.size(); }
  bool eat(char c) { return !done() && s[i] == c ? (++i, true) : false; }
  bool eatSign() { return eat('-') || eat('+'); }
  size_t eatWhile(bool (*ok)(char)) {
    size_t start = i;
    while (!done() && ok(s[i])) ++i;
    return i - start;
  }
  bool eatWord(std::string_view w) { return s.substr(i, w.size()) == w ? (i += w.size(), true) : false; }
  // (':' [0-5]?[0-9])+
  bool eatSexagesimal() {
    size_t count = 0;
    while (!done() && s[i] == ':') {
      size_t save = i++;
      if (i + 1 < s.size() && s[i] >= '0' && s[i] <= '5' && isDigit(s[i + 1])) {
        i += 2;
      } else if (!done() && isDigit(s[i])) {
        ++i;
      } else {
        i = save;
        break;
      }
      ++count;
    }
    return count > 0;
  }
  // ([eE][-+][0-9]+)?
  void eatExponent() {
    size_t save = i;
    if ((eat('e') || eat('E')) && eatSign() && eatWhile(isDigit) > 0) return;
    i = save;
  }
};

bool digitOrUnderscore(char c) { return isDigit(c) || c == '_'; }
bool octalOrUnderscore(char c) { return (c >= '0' && c <= '7') || c == '_'; }
bool binaryOrUnderscore(char c) { return c == '0' || c == '1' || c == '_'; }
bool hexOrUnderscore(char c) { return isHex(c) || c == '_'; }

bool matchesBool(std::string_view s) {
  static const char* words[] = {"yes",   "Yes",   "YES",   "no", "No", "NO", "true", "True", "TRUE",
                                "false", "False", "FALSE", "on", "On", "ON", "off",  "Off",  "OFF"};
  for (const char* w : words) {
    if (s == w) return true;
  }
  return false;
}

bool matchesNull(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

bool matchesInt(std::string_view text) {
  Scan c{text};
  c.eatSign();
  if (c.eatWord("0b")) return c.eatWhile(binaryOrUnderscore) > 0 && c.done();
  if (c.eatWord("0x")) return c.eatWhile(hexOrUnderscore) > 0 && c.done();
  if (c.eat('0')) return c.done() || (c.eatWhile(octalOrUnderscore) > 0 && c.done());
  if (c.done() || c.s[c.i] < '1' || c.s[c.i] > '9') return false;
  c.eatWhile(digitOrUnderscore);
  return c.done() || (c.eatSexagesimal() && c.done());
}

bool matchesFloat(std::string_view text) {
  {  // [-+]?[0-9][0-9_]*\.[0-9_]*(exp)?  and  [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    Scan c{text};
    c.eatSign();
    if (!c.done() && isDigit(c.s[c.i])) {
      c.eatWhile(digitOrUnderscore);
      if (c.eat('.')) {
        c.eatWhile(digitOrUnderscore);
        c.eatExponent();
        if (c.done()) return true;
      } else if (c.eatSexagesimal() && c.eat('.')) {
        c.eatWhile(digitOrUnderscore);
        if (c.done()) return true;
      }
    }
  }
  {  // \.[0-9][0-9_]*(exp)?
    Scan c{text};
    if (c.eat('.') && !c.done() && isDigit(c.s[c.i]) && c.eatWhile(digitOrUnderscore) > 0) {
      c.eatExponent();
      if (c.done()) return true;
    }
  }
  {  // [-+]?\.(inf|Inf|INF)  and  \.(nan|NaN|NAN)
    Scan c{text};
    bool signed_ = c.eatSign();
    if (c.eat('.')) {
      std::string_view rest = c.s.substr(c.i);
      if (rest == "inf" || rest == "Inf" || rest == "INF") return true;
      if (!signed_ && (rest == "nan" || rest == "NaN" || rest == "NAN")) return true;
    }
  }
  return false;
}

// [0-9]{4}-[0-9]{2}-[0-9]{2}, or a date and time as PyYAML's timestamp resolver allows.
bool matchesTimestamp(std::string_view text) {
  Scan c{text};
  auto digits = [&c](size_t lo, size_t hi) {
    size_t n = 0;
    while (n < hi && !c.done() && isDigit(c.s[c.i])) ++c.i, ++n;
    return n >= lo;
  };
  if (!digits(4, 4) || !c.eat('-')) return false;
  size_t after_year = c.i;
  if (digits(2, 2) && c.eat('-') && digits(2, 2) && c.done()) return true;
  c.i = after_year;
  if (!digits(1, 2) || !c.eat('-') || !digits(1, 2)) return false;
  if (!c.eat('T') && !c.eat('t') && c.eatWhile([](char ch) { return ch == ' ' || ch == '\t'; }) == 0) return false;
  if (!digits(1, 2) || !c.eat(':') || !digits(2, 2) || !c.eat(':') || !digits(2, 2)) return false;
  if (c.eat('.')) c.eatWhile(isDigit);
  c.eatWhile([](char ch) { return ch == ' ' || ch == '\t'; });
  if (c.eat('Z')) return c.done();
  if (c.eatSign()) {
    if (!digits(1, 2)) return false;
    if (c.eat(':') && !digits(2, 2)) return false;
  }
  return c.done();
}

std::string withoutUnderscores(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != '_') out += c;
  }
  return out;
}

// Python's float(): out of range is ±inf or 0, never an error (std::stod throws there).
double pythonFloat(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

// Base-60 "1:30" → 90, as PyYAML's construct_yaml_int/float do.
double sexagesimal(const std::string& digits) {
  double value = 0;
  for (const auto& part : split(digits, ':')) value = value * 60 + pythonFloat(part);
  return value;
}

long long constructInt(std::string_view text) {
  std::string v = withoutUnderscores(text);
  int sign = 1;
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
    if (v[0] == '-') sign = -1;
    v.erase(0, 1);
  }
  if (v == "0") return 0;
  if (startsWith(v, "0b")) return sign * std::stoll(v.substr(2), nullptr, 2);
  if (startsWith(v, "0x")) return sign * std::stoll(v.substr(2), nullptr, 16);
  if (v[0] == '0') return sign * std::stoll(v, nullptr, 8);
  if (v.find(':') != std::string::npos) {
    const double value = sexagesimal(v);
    // Past long long, casting is undefined: out of range, like stoll below (the caller keeps the text).
    if (!(value < 9.2e18)) throw std::out_of_range("sexagesimal integer " + v);
    return sign * static_cast<long long>(value);
  }
  return sign * std::stoll(v);
}

double constructFloat(std::string_view text) {
  std::string v = toLower(withoutUnderscores(text));
  double sign = 1;
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
    if (v[0] == '-') sign = -1;
    v.erase(0, 1);
  }
  if (v == ".inf") return sign * HUGE_VAL;
  if (v == ".nan") return std::nan("");
  if (v.find(':') != std::string::npos) return sign * sexagesimal(v);
  return sign * pythonFloat(v);
}

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

std::string doubleQuoted(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned cp = decodeUtf8(s, i);
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
    char buffer[16];
    if (named) {
      out += '\\';
      out += named;
    } else if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else if (cp <= 0xFF) {
      std::snprintf(buffer, sizeof buffer, "\\x%02X", cp);
      out += buffer;
    } else if (cp <= 0xFFFF) {
      std::snprintf(buffer, sizeof buffer, "\\u%04X", cp);
      out += buffer;
    } else {
      std::snprintf(buffer, sizeof buffer, "\\U%08X", cp);
      out += buffer;
    }
  }
  return out + "\"";
}

}  // namespace

ResolvedScalar resolvePlainScalar(std::string_view text) {
  const std::string s(text);
  ResolvedScalar r;
  if (matchesNull(s)) {
    r.kind = ScalarKind::Null;
  } else if (matchesBool(s)) {
    r.kind = ScalarKind::Bool;
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    r.boolean = c == 'y' || c == 't' || (c == 'o' && s.size() == 2);
  } else if (matchesInt(s)) {
    r.kind = ScalarKind::Int;
    try {
      r.integer = constructInt(s);
    } catch (const std::exception&) {
      r.kind = ScalarKind::String;  // out of int64 range: keep the text rather than guess
    }
  } else if (matchesFloat(s)) {
    r.kind = ScalarKind::Float;
    r.real = constructFloat(s);
  } else if (matchesTimestamp(s)) {
    r.kind = ScalarKind::Timestamp;
  } else if (s == "<<" || s == "=") {
    r.kind = ScalarKind::Special;
  }
  return r;
}

namespace {

constexpr int kBestWidth = 80;  // PyYAML's default line width

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
  bool reads_back_as_string = resolvePlainScalar(text).kind == ScalarKind::String && !matchesInt(text);
  if (reads_back_as_string && a.allow_block_plain && !text.empty()) {
    return fold(text, column, indent, false);
  }
  if (a.allow_single_quoted) {
    return "'" + fold(text, column < 0 ? column : column + 1, indent, true) + "'";
  }
  return doubleQuoted(text);
}

bool isJsonNumber(std::string_view text) {
  Scan c{text};
  c.eat('-');
  if (!c.eat('0') && c.eatWhile(isDigit) == 0) return false;
  if (c.eat('.') && c.eatWhile(isDigit) == 0) return false;
  if (c.eat('e') || c.eat('E')) {
    c.eatSign();
    if (c.eatWhile(isDigit) == 0) return false;
  }
  return c.done();
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

std::optional<std::vector<bool>> booleanTuple(std::string_view text) {
  std::string inner = trim(text);
  if (inner.size() >= 2 && inner.front() == '(' && inner.back() == ')') inner = inner.substr(1, inner.size() - 2);
  std::vector<bool> items;
  for (const auto& item : split(inner, ',')) {
    const std::string word = toLower(trim(item));
    if (word != "true" && word != "false") return std::nullopt;
    items.push_back(word == "true");
  }
  return items;
}

}  // namespace accel
