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

}  // namespace

bool matchesYamlInt(std::string_view text) { return matchesInt(text); }

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
