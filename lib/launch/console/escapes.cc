// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/console/escapes.h"

#include <algorithm>

namespace accel::launch::console {

namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';

bool csiFinal(char c) { return c >= 0x40 && c <= 0x7e; }
// "ESC ( B" and its kind choose a character set: three bytes.
bool isCharset(char c) { return c == '(' || c == ')' || c == '*' || c == '+'; }

// The length of the escape sequence at `text[i]` (an ESC), up to the end of `text` when cut.
size_t escapeLength(std::string_view text, size_t i) {
  size_t j = i + 1;
  if (j >= text.size()) return text.size() - i;
  if (text[j] == '[') {
    for (++j; j < text.size() && !csiFinal(text[j]); ++j) {
    }
    return std::min(j + 1, text.size()) - i;
  }
  if (text[j] == ']') {
    for (++j; j < text.size(); ++j) {
      if (text[j] == kBel) return j + 1 - i;
      if (text[j] == kEsc && j + 1 < text.size() && text[j + 1] == '\\') return j + 2 - i;
    }
    return text.size() - i;
  }
  return std::min(isCharset(text[j]) ? size_t{3} : size_t{2}, text.size() - i);
}

}  // namespace

std::string_view EscapeFilter::filter(std::string_view data) {
  std::string& out = out_;
  out.clear();
  for (char c : data) {
    switch (state_) {
      case State::Text:
        if (c == kEsc) {
          state_ = State::Escape;
        } else {
          out += c;
        }
        break;
      case State::Escape:
        state_ = c == '[' ? State::Csi : c == ']' ? State::Osc : isCharset(c) ? State::Charset : State::Text;
        break;
      case State::Charset: state_ = State::Text; break;
      case State::Csi:
        if (csiFinal(c)) state_ = State::Text;
        break;
      case State::Osc:
        if (c == kBel) state_ = State::Text;
        if (c == kEsc) state_ = State::OscEscape;
        break;
      case State::OscEscape: state_ = c == '\\' ? State::Text : State::Osc; break;
    }
  }
  return out;
}

std::string keepColours(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != kEsc) {
      const size_t next = text.find(kEsc, i);
      const size_t end = next == std::string_view::npos ? text.size() : next;
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    const size_t n = escapeLength(text, i);
    const std::string_view sequence = text.substr(i, n);
    if (n > 2 && sequence[1] == '[' && sequence.back() == 'm') out.append(sequence);
    i += n;
  }
  return out;
}

std::string fitToWidth(std::string_view text, size_t columns) {
  std::string out;
  size_t cells = 0;
  bool escaped = false;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == kEsc) {
      const size_t n = escapeLength(text, i);
      out.append(text.substr(i, n));
      escaped = true;
      i += n;
      continue;
    }
    size_t n = 1;  // a UTF-8 lead byte and its continuation bytes draw one cell
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xc0) == 0x80) ++n;
    if (cells == columns) break;
    out.append(text.substr(i, n));
    ++cells;
    i += n;
  }
  if (escaped) out += "\x1b[0m";
  return out;
}

}  // namespace accel::launch::console
