// SPDX-License-Identifier: Apache-2.0
// The user's typing, for the one rank that takes it (a debugger's prompt). While the launcher's
// stdin is a terminal and the launcher is that terminal's foreground process group, the
// terminal is put in non-canonical, no-echo mode (its signal keys stay: Ctrl-C and Ctrl-Z still
// reach the launcher as signals) and every byte typed goes to the rank's pseudo-terminal, whose
// line discipline echoes and edits as a terminal does: what the user types shows on the rank's
// live line. In the background the launcher neither reads the terminal (SIGTTIN is ignored, so
// a read there fails instead of stopping the launcher) nor changes its modes. The saved modes
// come back at release() (before the launcher stops for Ctrl-Z) and in the destructor, on every
// exit path. Single-threaded.
#pragma once

#include <signal.h>
#include <termios.h>

namespace accel::launch::console {

class TerminalInput {
 public:
  explicit TerminalInput(int fd = 0);
  ~TerminalInput();
  TerminalInput(const TerminalInput&) = delete;
  TerminalInput& operator=(const TerminalInput&) = delete;

  // Takes the terminal when it is one and the launcher is its foreground; gives it back when
  // the launcher is not (any more). True while taken: then poll fd() for input.
  bool claim();
  // Restores the terminal's modes (when they were changed); claim() takes it again.
  void release();
  int fd() const { return fd_; }
  // The launcher's stdin is a terminal that has not ended.
  bool terminal() const { return terminal_ && !ended_; }
  // ... and the launcher is its foreground process group: what claim() would take now.
  bool foreground() const;
  // Reads what was typed and writes it to `target` (a pseudo-terminal's master; what it cannot
  // take now is dropped, as a terminal drops typing past its buffer). At the end of the input,
  // or when the terminal is no longer readable here, gives it back until the next claim().
  void forward(int target);

 private:
  int fd_;
  bool terminal_ = false;
  bool taken_ = false;
  bool ended_ = false;  // read its end (a hangup): never taken again
  termios saved_{};
  struct sigaction old_ttin_ {};
};

}  // namespace accel::launch::console
