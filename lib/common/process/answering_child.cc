// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/answering_child.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel::process {

ChildSpec answeringChild(std::function<int()> body) {
  ChildSpec spec;
  spec.own_group = true;
  spec.death_signal = SIGKILL;
  spec.body = std::move(body);
  return spec;
}

AnsweringChild::~AnsweringChild() { stop(); }

void AnsweringChild::stop() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pid_ = 0;
}

void AnsweringChild::start(const std::function<int(int out_fd)>& body, Clock::time_point give_up_at, size_t max_bytes) {
  stop();
  output_.clear();
  max_ = max_bytes;
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw Error(fmt::format("no pipe: {}", std::strerror(errno)));
  const int out = ends[1];
  try {
    // The child holds none of the caller's descriptors but its pipe's (the caller's sockets close
    // when the caller closes them, whatever the child is doing).
    pid_ = spawnChild(answeringChild([&body, out] {
      ::close_range(3, static_cast<unsigned>(out) - 1, 0);
      ::close_range(static_cast<unsigned>(out) + 1, ~0U, 0);
      return body(out);
    }));
  } catch (const Error&) {
    pid_ = 0;
    ::close(ends[0]);
    ::close(ends[1]);
    throw;
  }
  ::close(ends[1]);
  fd_ = ends[0];
  give_up_at_ = give_up_at;
}

void AnsweringChild::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  if (fd_ < 0) return;
  fds.push_back({fd_, POLLIN, 0});
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up_at_ - Clock::now()).count();
  const int due = static_cast<int>(std::max<long long>(0, left));
  if (timeout_ms < 0 || due < timeout_ms) timeout_ms = due;
}

std::optional<AnsweringChild::Answer> AnsweringChild::service(const std::vector<pollfd>& fds) {
  if (fd_ < 0) return std::nullopt;
  for (const pollfd& p : fds) {
    if (p.fd != fd_ || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buffer[65536];
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n > 0 && output_.size() < max_) output_.append(buffer, static_cast<size_t>(n));
    if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) break;
    ::close(fd_);  // it closed its end: its answer is whole (what it started is its own to end)
    fd_ = -1;
    pid_ = 0;
    return Answer{std::exchange(output_, {}), false};
  }
  if (Clock::now() < give_up_at_) return std::nullopt;
  stop();  // a child that is still writing at its deadline is given up on too
  return Answer{std::exchange(output_, {}), true};
}

}  // namespace accel::process
