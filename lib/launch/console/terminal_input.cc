// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/console/terminal_input.h"

#include <unistd.h>

#include <cerrno>

namespace accel::launch::console {

TerminalInput::TerminalInput(int fd) : fd_(fd) {
  terminal_ = ::isatty(fd_) == 1 && ::tcgetattr(fd_, &saved_) == 0;
  if (!terminal_) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGTTIN, &ignore, &old_ttin_);
}

TerminalInput::~TerminalInput() {
  if (!terminal_) return;
  release();
  ::sigaction(SIGTTIN, &old_ttin_, nullptr);
}

bool TerminalInput::foreground() const { return terminal() && ::tcgetpgrp(fd_) == ::getpgrp(); }

bool TerminalInput::claim() {
  if (!terminal()) return false;
  if (!foreground()) {
    taken_ = false;  // the shell owns the modes now; a stopped launcher gave them back before
    return false;
  }
  if (taken_) return true;
  if (::tcgetattr(fd_, &saved_) != 0) return false;
  termios typing = saved_;
  typing.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  typing.c_cc[VMIN] = 1;
  typing.c_cc[VTIME] = 0;
  taken_ = ::tcsetattr(fd_, TCSADRAIN, &typing) == 0;
  return taken_;
}

void TerminalInput::release() {
  if (!taken_) return;
  taken_ = false;
  if (::tcgetpgrp(fd_) == ::getpgrp()) ::tcsetattr(fd_, TCSADRAIN, &saved_);
}

void TerminalInput::forward(int target) {
  char buffer[4096];
  const ssize_t n = ::read(fd_, buffer, sizeof buffer);
  if (n > 0) {
    if (target >= 0) (void)!::write(target, buffer, static_cast<size_t>(n));
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  ended_ = n == 0;
  release();
}

}  // namespace accel::launch::console
