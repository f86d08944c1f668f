// SPDX-License-Identifier: Apache-2.0
// Terminal escape sequences in a worker's output: the colours and cursor moves of a program that
// sees a terminal. Log files get the text without them; a live line is cut to the screen's
// width counting what a terminal draws (characters, not bytes; escapes draw nothing). Pure,
// except that EscapeFilter remembers a sequence cut between two reads.
#pragma once

#include <string>
#include <string_view>

namespace accel::launch::console {

// Removes ECMA-48 escape sequences (CSI "ESC [ … final", OSC "ESC ] … BEL or ESC \", a
// character set's "ESC ( B", and the two-byte ones) from a stream given in pieces.
class EscapeFilter {
 public:
  // `data` without its escapes; valid until the next call.
  std::string_view filter(std::string_view data);

 private:
  std::string out_;  // reused: a flood of output allocates once
  enum class State { Text, Escape, Csi, Osc, OscEscape, Charset };
  State state_ = State::Text;
};

// `text` with every escape sequence removed but colours (SGR: "ESC [ … m"): what a worker's line
// may carry onto the console, which owns the cursor and the start of every line it draws (a
// progress bar's "ESC [ 2 K" would erase the rank's prefix, a cursor move would draw over other
// lines). A sequence cut at the end of `text` is dropped.
std::string keepColours(std::string_view text);

// `text` cut so that it draws at most `columns` cells: UTF-8 characters count one cell each,
// escape sequences none; a sequence is never cut. When `text` has escapes, the result ends with
// "ESC[0m" so the next line starts in the terminal's own colours.
std::string fitToWidth(std::string_view text, size_t columns);

}  // namespace accel::launch::console
