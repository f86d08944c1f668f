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
  if (!open()) return;
  out_ += line;
  out_ += '\n';
  last_sent_ = Clock::now();
  flush();
}

void LineConnection::flush() {
  while (open() && !out_.empty()) {
    ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        error_ = toLower(std::strerror(errno));
        close();
      }
      return;
    }
  }
}

std::vector<std::string> LineConnection::service(short revents) {
  std::vector<std::string> lines;
  if (!open()) return lines;
  if (revents & POLLOUT) flush();
  if (!(revents & (POLLIN | POLLHUP | POLLERR))) return lines;
  char buffer[16384];
  ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    error_ = n == 0 ? "connection closed" : toLower(std::strerror(errno));
    close();
    return lines;
  }
  if (n < 0) return lines;
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
  }
  return lines;
}

}  // namespace accel::launch::job
