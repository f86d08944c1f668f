// SPDX-License-Identifier: Apache-2.0
#include "tests/support/pty.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace accel::test {

PtySession::PtySession(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  winsize size{24, 80, 0, 0};
  pid_ = ::forkpty(&fd_, nullptr, nullptr, &size);
  if (pid_ < 0) throw std::runtime_error("forkpty failed");
  if (pid_ == 0) {
    for (const auto& [k, v] : env) {
      if (v.empty()) {
        ::unsetenv(k.c_str());
      } else {
        ::setenv(k.c_str(), v.c_str(), 1);
      }
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    _exit(127);
  }
}

PtySession::~PtySession() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool PtySession::readSome(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  char buffer[4096];
  ssize_t n = ::read(fd_, buffer, sizeof buffer);
  if (n <= 0) return false;  // EIO once the child has exited
  output_.append(buffer, static_cast<size_t>(n));
  return true;
}

bool PtySession::waitFor(const std::string& text, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    size_t at = output_.find(text, cursor_);
    if (at != std::string::npos) {
      cursor_ = at + text.size();
      return true;
    }
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !readSome(static_cast<int>(left))) return false;
  }
}

void PtySession::send(const std::string& keys) {
  size_t done = 0;
  while (done < keys.size()) {
    ssize_t n = ::write(fd_, keys.data() + done, keys.size() - done);
    if (n <= 0) throw std::runtime_error("write to pty failed");
    done += static_cast<size_t>(n);
  }
}

int PtySession::wait(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      while (readSome(50)) {
      }
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    readSome(20);  // drain, so the child never blocks on a full pty buffer
  }
}

}  // namespace accel::test
