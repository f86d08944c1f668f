// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/console/line_assembler.h"

#include <algorithm>

namespace accel::launch::console {

void LineAssembler::feed(std::string_view data, FunctionRef<void(std::string_view)> line,
                         FunctionRef<void(std::string_view)> frame) {
  while (!data.empty()) {
    const auto end = std::find_if(data.begin(), data.end(), [](char c) { return c == '\n' || c == '\r'; });
    const size_t plain = static_cast<size_t>(end - data.begin());
    size_t taken = 0;
    while (taken < plain) {  // text, in pieces where the line grows past kMaxLine
      const size_t room = kMaxLine - current_.size();
      const size_t n = std::min(room, plain - taken);
      current_.append(data.substr(taken, n));
      taken += n;
      if (current_.size() == kMaxLine) endLine(line);
    }
    if (end == data.end()) return;
    if (*end == '\n') {
      endLine(line);
    } else {
      framed_ = true;
      if (!current_.empty()) {
        shown_.swap(current_);
        current_.clear();
        frame(shown_);
      }
    }
    data.remove_prefix(plain + 1);
  }
}

std::string LineAssembler::takeOpen() {
  std::string text(visible());
  current_.clear();
  shown_.clear();
  framed_ = false;
  return text;
}

void LineAssembler::endLine(FunctionRef<void(std::string_view)> line) {
  line(visible());
  current_.clear();
  shown_.clear();
  framed_ = false;
}

}  // namespace accel::launch::console
