// SPDX-License-Identifier: Apache-2.0
#include "lib/config/json_syntax.h"

#include <vector>

#include <fmt/format.h>

namespace accel {

namespace {

struct Bad {
  size_t at;
  std::string message, hint;
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A recursive-descent reader with an explicit stack, so depth costs no C++ stack.
class Reader {
 public:
  explicit Reader(std::string_view text) : t_(text) {}

  void document() {
    if (t_.substr(0, 3) == "\xEF\xBB\xBF") {
      throw Bad{0, "the file starts with a UTF-8 byte order mark", "save it as UTF-8 without a BOM"};
    }
    skip();
    value();
    while (!stack_.empty()) afterValue();
    skip();
    if (i_ < t_.size()) throw Bad{i_, "extra data after the top-level value", "a config is one JSON object"};
  }

 private:
  std::string_view t_;
  size_t i_ = 0;
  std::vector<char> stack_;  // '{' or '[' for each open container

  void skip() {
    while (i_ < t_.size() && isSpace(t_[i_])) ++i_;
  }
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  bool word(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  // One value; for a container, only its opening (the rest follows in afterValue()).
  void value() {
    const char c = peek();
    if (c == '{' || c == '[') return open(c);
    if (c == '"') return string();
    if (c == '-' || isDigit(c)) return number();
    for (std::string_view w : {"true", "false", "null", "NaN", "Infinity"}) {
      if (word(w)) return;
    }
    throw Bad{i_, i_ < t_.size() ? "expecting a value" : "the text ends where a value should be",
              c == '\'' ? "JSON strings take double quotes" : ""};
  }

  void open(char c) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      throw Bad{i_, fmt::format("nested deeper than {} levels", kMaxJsonDepth), "Accelerate's configs nest 3 levels"};
    }
    stack_.push_back(c);
    ++i_;
    skip();
    if (peek() == (c == '{' ? '}' : ']')) return;  // empty: afterValue() closes it
    if (c == '{') return member();
    value();
  }

  void member() {
    if (peek() != '"') {
      throw Bad{i_, "expecting a key in double quotes", peek() == '}' ? "remove the comma before '}'" : ""};
    }
    string();
    skip();
    if (peek() != ':') throw Bad{i_, "expecting ':' after the key", ""};
    ++i_;
    skip();
    value();
  }

  // After a value inside the innermost open container: a comma and the next, or its end.
  void afterValue() {
    skip();
    const char open_c = stack_.back(), close_c = open_c == '{' ? '}' : ']';
    if (peek() == close_c) {
      ++i_;
      stack_.pop_back();
      return;
    }
    if (peek() != ',') {
      throw Bad{i_,
                i_ < t_.size() ? fmt::format("expecting ',' or '{}'", close_c)
                               : fmt::format("the text ends before '{}'", close_c),
                ""};
    }
    ++i_;
    skip();
    if (open_c == '{') return member();
    if (peek() == ']') throw Bad{i_, "expecting a value after ','", "remove the comma before ']'"};
    value();
  }

  void string() {
    const size_t start = i_++;
    for (;;) {
      if (i_ >= t_.size()) throw Bad{start, "a string that never ends", "close it with '\"'"};
      const unsigned char c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') return void(++i_);
      if (c < 0x20)
        throw Bad{i_, fmt::format("control character U+{:04X} inside a string", c),
                  "write it as an escape (\\n, \\t, \\u0001)"};
      if (c == '\\') {
        escape();
      } else {
        ++i_;
      }
    }
  }

  void escape() {
    const char e = i_ + 1 < t_.size() ? t_[i_ + 1] : '\0';
    if (e == 'u') {
      for (size_t k = 2; k < 6; ++k) {
        if (i_ + k >= t_.size() || !isHex(t_[i_ + k])) throw Bad{i_, "\\u is not followed by 4 hex digits", ""};
      }
      i_ += 6;
      return;
    }
    if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos || e == '\0') {
      throw Bad{i_, fmt::format("invalid escape \\{}", e), "JSON escapes: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"};
    }
    i_ += 2;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)? — or -Infinity.
  void number() {
    const size_t start = i_;
    if (peek() == '-') {
      ++i_;
      if (word("Infinity")) return;
    }
    if (!isDigit(peek())) throw Bad{start, "expecting a value", ""};
    if (peek() == '0') {
      ++i_;
    } else {
      while (isDigit(peek())) ++i_;
    }
    if (peek() == '.' && i_ + 1 < t_.size() && isDigit(t_[i_ + 1])) {
      ++i_;
      while (isDigit(peek())) ++i_;
    }
    if ((peek() == 'e' || peek() == 'E')) {
      size_t j = i_ + 1;
      if (j < t_.size() && (t_[j] == '+' || t_[j] == '-')) ++j;
      if (j < t_.size() && isDigit(t_[j])) {
        i_ = j;
        while (isDigit(peek())) ++i_;
      }
    }
  }
};

}  // namespace

std::optional<JsonSyntaxError> checkJsonSyntax(std::string_view text) {
  try {
    Reader(text).document();
    return std::nullopt;
  } catch (const Bad& b) {
    JsonSyntaxError e;
    for (size_t k = 0; k < b.at && k < text.size(); ++k) {
      if (text[k] == '\n') {
        ++e.line;
        e.column = 1;
      } else {
        ++e.column;
      }
    }
    e.message = "invalid JSON: " + b.message;
    e.hint = b.hint.empty() ? "Accelerate reads .json configs with Python's json.load, which refuses this too" : b.hint;
    return e;
  }
}

}  // namespace accel
