// SPDX-License-Identifier: Apache-2.0
#include "lib/common/base64.h"

namespace accel {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int valueOf(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64Encode(const std::string& bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t whole = bytes.size() / 3 * 3;
  for (size_t i = 0; i < whole; i += 3, o += 4) {  // the log forwarder's bulk: no branch per byte
    const unsigned n = in[i] << 16 | in[i + 1] << 8 | in[i + 2];
    o[0] = kAlphabet[n >> 18];
    o[1] = kAlphabet[(n >> 12) & 63];
    o[2] = kAlphabet[(n >> 6) & 63];
    o[3] = kAlphabet[n & 63];
  }
  if (whole < bytes.size()) {
    unsigned n = in[whole] << 16;
    if (whole + 1 < bytes.size()) n |= in[whole + 1] << 8;
    o[0] = kAlphabet[n >> 18];
    o[1] = kAlphabet[(n >> 12) & 63];
    if (whole + 1 < bytes.size()) o[2] = kAlphabet[(n >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64Decode(const std::string& text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    unsigned n = 0;
    for (size_t j = 0; j < 4; ++j) {
      const int v = j >= 4 - static_cast<size_t>(pad) ? 0 : valueOf(text[i + j]);
      if (v < 0) return std::nullopt;
      n = n << 6 | static_cast<unsigned>(v);
    }
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 255);
    if (pad < 1) out += static_cast<char>(n & 255);
  }
  return out;
}

}  // namespace accel
