// SPDX-License-Identifier: Apache-2.0
// `accel top`'s terminal: the alternate screen, the cursor hidden, the keyboard read key by key
// (no echo, no line editing; Ctrl-C still a signal), and the terminal as it was restored when the
// object goes, whatever ends the program (a key, Ctrl-C, Ctrl-\, SIGTERM, an error), and while
// Ctrl-Z stops it. Keys and the signals that matter come from one poll. Single-threaded.
#pragma once

#include <signal.h>

#include <optional>
#include <string>
#include <vector>

namespace accel {

class TopTerminal {
 public:
  enum class Key { None, Quit, Sort, Up, Down, Lines, Events };
  TopTerminal();  // throws Error when stdin and stdout are no terminal
  ~TopTerminal();
  TopTerminal(const TopTerminal&) = delete;
  TopTerminal& operator=(const TopTerminal&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }
  // Waits up to `timeout_ms` for a key or a signal; SIGWINCH reads the size again (`resized`),
  // SIGTSTP stops with the terminal restored (`resized` after fg), SIGINT, SIGTERM, SIGHUP and
  // SIGQUIT give `interrupted` (128 + the signal).
  Key wait(int timeout_ms, bool& resized, int& interrupted);
  void draw(const std::vector<std::string>& lines);

 private:
  void readSize();
  void enter();  // raw keys, the alternate screen, no cursor
  void leave();  // the terminal as it was
  void suspend();
  int signal_fd_ = -1;
  int width_ = 80, height_ = 24;
  std::string saved_;    // the termios the terminal had, as bytes
  std::string pending_;  // bytes of a key not complete yet (an arrow's escape sequence)
  sigset_t old_mask_{};
};

}  // namespace accel
