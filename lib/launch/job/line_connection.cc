// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/line_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/launch/job/job_messages.h"

namespace accel::launch::job {

using Clock = std::chrono::steady_clock;

LineConnection::LineConnection(int fd) : fd_(fd), since_(Clock::now()), last_heard_(since_), last_sent_(since_) {}

LineConnection::~LineConnection() { close(); }

void LineConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  closed_ = true;
}

void LineConnection::send(const std::string& line) {
  if (!open() || !write_error_.empty()) return;
  out_ += line;
  out_ += '\n';
  last_sent_ = Clock::now();
  flush();
}

void LineConnection::flush() {
  while (open() && wantsToWrite()) {
    ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        write_error_ = toLower(std::strerror(errno));
        out_.clear();
      }
      return;
    }
  }
}

std::vector<std::string> LineConnection::service(short revents) {
  std::vector<std::string> lines;
  if (!open()) return lines;
  if (revents & POLLOUT) flush();
  if (!write_error_.empty()) {
    while (receive(lines)) {
    }
    if (open()) error_ = write_error_;
    close();
    return lines;
  }
  if (revents & (POLLIN | POLLHUP | POLLERR)) receive(lines);
  return lines;
}

bool LineConnection::receive(std::vector<std::string>& lines) {
  char buffer[16384];
  ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    error_ = n == 0 ? "connection closed" : toLower(std::strerror(errno));
    if (!write_error_.empty()) error_ += " (" + write_error_ + ")";
    close();
    return false;
  }
  if (n < 0) return errno == EINTR;
  in_.append(buffer, static_cast<size_t>(n));
  last_heard_ = Clock::now();
  size_t start = 0;
  for (size_t end; (end = in_.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.emplace_back(in_, start, end - start);
  }
  in_.erase(0, start);
  if (in_.size() > job::kMaxLine) {
    error_ = fmt::format("a line longer than {} KiB", job::kMaxLine / 1024);
    close();
    return false;
  }
  return true;
}

}  // namespace accel::launch::job
