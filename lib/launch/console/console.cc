// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/console/console.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/common/write_fully.h"
#include "lib/launch/console/escapes.h"

namespace accel::launch::console {

namespace {

bool sameTerminal(int a, int b) {
  struct stat sa {
  }, sb{};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && S_ISCHR(sa.st_mode) && sa.st_rdev == sb.st_rdev;
}

}  // namespace

Console::Sinks Console::launcherSinks() {
  Sinks s;
  s.out_on_screen = ::isatty(1) == 1;
  s.err_on_screen = ::isatty(2) == 1 && (!s.out_on_screen || sameTerminal(1, 2));
  return s;
}

Console::Console(Sinks sinks) : sinks_(sinks) { readSize(); }

Console::~Console() {
  flush(Clock::now(), true);
  if (drawn_ > 0) writeFully(screenFd(), "\n");
}

int Console::screenFd() const { return sinks_.out_on_screen ? sinks_.out : sinks_.err_on_screen ? sinks_.err : -1; }

bool Console::onScreen(int fd) const { return fd == 1 ? sinks_.out_on_screen : sinks_.err_on_screen; }

int Console::sinkFd(int fd) const { return onScreen(fd) ? screenFd() : fd == 1 ? sinks_.out : sinks_.err; }

bool Console::readSize() {
  winsize size{};
  const int fd = screenFd();
  if (fd < 0 || ::ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_col == 0) return false;
  const bool changed = size.ws_col != columns_ || size.ws_row != rows_;
  columns_ = size.ws_col;
  rows_ = size.ws_row > 0 ? size.ws_row : rows_;
  dirty_ = dirty_ || (changed && !live_.empty());
  return changed;
}

void Console::line(int fd, std::string_view prefix, std::string_view text) {
  const int sink = sinkFd(fd);
  queued_.append(prefix).append(text) += '\n';
  if (runs_.empty() || runs_.back().first != sink) {
    runs_.emplace_back(sink, queued_.size());
  } else {
    runs_.back().second = queued_.size();
  }
}

void Console::live(int key, std::string text) {
  if (text.empty()) {
    dirty_ = live_.erase(key) > 0 || dirty_;
    return;
  }
  auto [it, added] = live_.try_emplace(key, std::move(text));
  if (!added) {
    if (it->second == text) return;
    it->second = std::move(text);
  }
  dirty_ = true;
}

std::string Console::eraseCode() const {
  if (drawn_ == 0) return "";
  return drawn_ > 1 ? fmt::format("\r\x1b[{}A\x1b[J", drawn_ - 1) : std::string("\r\x1b[J");
}

void Console::flush(Clock::time_point now, bool force) {
  const int screen = screenFd();
  screen_.clear();
  size_t begin = 0;
  for (const auto& [fd, end] : runs_) {  // the screen's lines go out with its live lines
    const std::string_view run(queued_.data() + begin, end - begin);
    if (fd == screen) {
      screen_.append(run);
    } else {
      writeFully(fd, run);
    }
    begin = end;
  }
  queued_.clear();  // keeps its capacity: a flood of lines allocates once
  runs_.clear();
  const bool redraw = dirty_ && (force || now - drawn_at_ >= kRedraw);
  if (screen < 0 || (screen_.empty() && !redraw)) return;
  screen_.insert(0, eraseCode());
  size_t drawn = 0;
  for (const auto& [key, text] : live_) {
    if (drawn++ > 0) screen_ += '\n';
    screen_ += fitToWidth(text, static_cast<size_t>(std::max(1, columns_ - 1)));
  }
  drawn_ = drawn;
  dirty_ = false;
  drawn_at_ = now;
  writeFully(screen, screen_);
}

std::optional<Console::Clock::time_point> Console::deadline() const {
  if (!dirty_ || screenFd() < 0) return std::nullopt;
  return drawn_at_ + kRedraw;
}

void Console::erase() {
  const int screen = screenFd();
  if (screen < 0 || drawn_ == 0) return;
  writeFully(screen, eraseCode());
  drawn_ = 0;
  dirty_ = !live_.empty();
}

}  // namespace accel::launch::console
