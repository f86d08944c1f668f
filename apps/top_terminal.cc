// SPDX-License-Identifier: Apache-2.0
#include "apps/top_terminal.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lib/common/error.h"
#include "lib/common/write_fully.h"

namespace accel {

namespace {

sigset_t watchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGTSTP, SIGCONT}) sigaddset(&set, s);
  return set;
}

}  // namespace

TopTerminal::TopTerminal() {
  termios t{};
  if (!::isatty(0) || !::isatty(1) || ::tcgetattr(0, &t) != 0) {
    throw UsageError("accel top needs a terminal for its live screen", "use --once or --json for scripts");
  }
  saved_.assign(reinterpret_cast<const char*>(&t), sizeof t);
  // The signals first: one that comes while the terminal is being changed waits for wait().
  const sigset_t set = watchedSignals();
  ::sigprocmask(SIG_BLOCK, &set, &old_mask_);
  signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) {
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    throw Error(std::string("accel top cannot watch for signals: ") + std::strerror(errno));
  }
  readSize();
  enter();
}

void TopTerminal::enter() {
  termios raw{};
  std::memcpy(&raw, saved_.data(), sizeof raw);
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  ::tcsetattr(0, TCSANOW, &raw);
  writeFully(1, "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
}

void TopTerminal::leave() {
  writeFully(1, "\x1b[?25h\x1b[?1049l");
  termios t{};
  std::memcpy(&t, saved_.data(), sizeof t);
  ::tcsetattr(0, TCSANOW, &t);
}

TopTerminal::~TopTerminal() {
  leave();
  ::close(signal_fd_);
  ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

// Ctrl-Z: the terminal as it was while stopped, the screen drawn again after fg.
void TopTerminal::suspend() {
  leave();
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  ::signal(SIGTSTP, SIG_DFL);
  ::sigprocmask(SIG_UNBLOCK, &tstp, nullptr);
  ::raise(SIGTSTP);  // stops here until SIGCONT
  ::sigprocmask(SIG_BLOCK, &tstp, nullptr);
  enter();
}

void TopTerminal::readSize() {
  winsize w{};
  if (::ioctl(1, TIOCGWINSZ, &w) == 0 && w.ws_col > 0 && w.ws_row > 0) {
    width_ = w.ws_col;
    height_ = w.ws_row;
  }
}

TopTerminal::Key TopTerminal::wait(int timeout_ms, bool& resized, int& interrupted) {
  pollfd fds[2] = {{0, POLLIN, 0}, {signal_fd_, POLLIN, 0}};
  if (pending_.empty() && ::poll(fds, 2, timeout_ms) <= 0) return Key::None;
  if (fds[1].revents & POLLIN) {
    signalfd_siginfo info;
    while (::read(signal_fd_, &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGWINCH || info.ssi_signo == SIGCONT) {
        readSize();
        resized = true;
      } else if (info.ssi_signo == SIGTSTP) {
        suspend();
        readSize();
        resized = true;
      } else {
        interrupted = 128 + static_cast<int>(info.ssi_signo);
      }
    }
  }
  char buffer[64];
  const ssize_t n = (fds[0].revents & POLLIN) ? ::read(0, buffer, sizeof buffer) : 0;
  if (n > 0) pending_.append(buffer, static_cast<size_t>(n));
  if (pending_.empty()) return Key::None;
  if (pending_.rfind("\x1b[A", 0) == 0 || pending_.rfind("\x1b[B", 0) == 0) {
    const Key key = pending_[2] == 'A' ? Key::Up : Key::Down;
    pending_.erase(0, 3);
    return key;
  }
  const char c = pending_[0];
  if (c == '\x1b' && pending_.size() < 3) {  // the rest of an arrow's sequence may follow
    if (n > 0) return Key::None;
    pending_.clear();
    return Key::None;
  }
  pending_.erase(0, 1);
  switch (c) {
    case 'q':
    case 'Q': return Key::Quit;
    case 's': return Key::Sort;
    case 'k': return Key::Up;
    case 'j': return Key::Down;
    case '\r':
    case '\n': return Key::Lines;
    case 'e': return Key::Events;
    default: return Key::None;
  }
}

void TopTerminal::draw(const std::vector<std::string>& lines) {
  std::string out = "\x1b[H";
  for (size_t i = 0; i < lines.size() && static_cast<int>(i) < height_; ++i) {
    out += lines[i] + "\x1b[K";
    if (static_cast<int>(i) + 1 < height_) out += "\r\n";
  }
  out += "\x1b[J";
  writeFully(1, out);
}

}  // namespace accel
