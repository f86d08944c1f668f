// SPDX-License-Identifier: Apache-2.0
// The launcher's console: its stdout and stderr, where worker lines and its own "accel: …" lines
// go. Lines are queued and written at flush(), each sink's run of lines in one write, so lines
// of different ranks never mix and a flood of short lines costs few system calls.
//
// When a sink is a terminal (the screen), every worker stream with an open line (bytes with no
// newline yet: a prompt, a progress bar) has a live line at the bottom of the screen, in key
// order (rank, then stdout before stderr); finished lines of any stream are printed above them
// all, the way cargo and pip keep their log lines above live bars. Live lines are cut to the
// screen's width so that they never wrap, and redrawn at most every kRedraw. On a sink that is
// not a terminal nothing is live: the streams decide what to write (output_stream.h).
// Single-threaded; not thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accel::launch::console {

class Console {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kRedraw = std::chrono::milliseconds(40);

  struct Sinks {
    int out = 1, err = 2;  // the launcher's stdout and stderr
    bool out_on_screen = false, err_on_screen = false;
  };
  // The launcher's own stdout and stderr; the screen is the terminal that stdout is, else the one
  // stderr is; both are on it when both are the same terminal.
  static Sinks launcherSinks();

  explicit Console(Sinks sinks = launcherSinks());
  ~Console();  // leaves the cursor on a line of its own, below every live line
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  // `fd` (1 or 2, as the launcher's own) shows on the terminal.
  bool onScreen(int fd) const;
  // The terminal's size, as last read (80 x 24 when it cannot be read, or there is none).
  int columns() const { return columns_; }
  int rows() const { return rows_; }
  // Reads the terminal's size again (after SIGWINCH); true when it changed.
  bool readSize();

  // A finished line, `prefix` then `text` (without its newline), for `fd` (1 or 2).
  void line(int fd, std::string_view prefix, std::string_view text = {});
  // The live line of `key`: set, or removed with "". Only for a stream on the screen.
  void live(int key, std::string text);
  // Writes what is queued; redraws the live lines when they changed and kRedraw has passed since
  // the last redraw (at once with `force`).
  void flush(Clock::time_point now, bool force = false);
  // When flush() next has something to do without new input, if ever.
  std::optional<Clock::time_point> deadline() const;

  // Before the launcher stops (Ctrl-Z): the live lines are erased so the shell's words land on
  // a clean line; drawn again at the next flush.
  void erase();

 private:
  std::string eraseCode() const;  // moves to the live lines' first row and clears to the end
  int sinkFd(int fd) const;       // where `fd`'s lines are written
  int screenFd() const;           // -1 without a terminal
  Sinks sinks_;
  int columns_ = 80, rows_ = 24;
  // What is queued: lines back to back in `queued_`, and where each sink's run of them ends.
  std::string queued_;
  std::vector<std::pair<int, size_t>> runs_;  // (sink fd, end in queued_)
  std::string screen_;                        // what the screen is sent, reused
  std::map<int, std::string> live_;
  size_t drawn_ = 0;  // live lines on the screen now; the cursor is at the end of the last
  bool dirty_ = false;
  Clock::time_point drawn_at_{};
};

}  // namespace accel::launch::console
