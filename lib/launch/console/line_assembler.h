// SPDX-License-Identifier: Apache-2.0
// A worker's bytes as a console shows them: complete lines, and the open line (the bytes after
// the last newline) as it stands now. A carriage return ends a frame of the open line, the way
// tqdm redraws its bar: what the open line shows is its newest non-empty frame, and a line that
// ends in "\r\n" is the frame before it. The open line never holds more than its current and
// newest frames, so a bar redrawn forever costs no memory; a line longer than kMaxLine bytes is
// handed on in pieces. Single-threaded.
#pragma once

#include <string>
#include <string_view>

#include "lib/common/function_ref.h"

namespace accel::launch::console {

class LineAssembler {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;

  // `line` for every complete line (without its newline), `frame` for every non-empty frame that
  // a carriage return ends, in the order the bytes hold them.
  void feed(std::string_view data, FunctionRef<void(std::string_view)> line, FunctionRef<void(std::string_view)> frame);

  // What the open line shows now ("" when nothing is open).
  std::string_view visible() const { return current_.empty() ? shown_ : current_; }
  // The newest frame that a carriage return ended ("" for none).
  std::string_view lastFrame() const { return shown_; }
  // The open line has drawn frames: a progress bar, not text written in pieces.
  bool framed() const { return framed_; }
  // Hands on the open line's text and starts it anew (a console that had to show it early).
  std::string takeOpen();

 private:
  void endLine(FunctionRef<void(std::string_view)> line);
  std::string current_;  // bytes since the last carriage return or newline
  std::string shown_;    // the newest non-empty frame of the open line
  bool framed_ = false;
};

}  // namespace accel::launch::console
