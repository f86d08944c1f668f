// SPDX-License-Identifier: Apache-2.0
// One connection of the job channel (job_link.h): lines of text both ways on a non-blocking
// socket, buffered, so that a slow or vanished peer never blocks the launcher's single thread.
// It knows nothing of what the lines mean (job_messages.h does); it only bounds them: a peer
// that sends a line longer than job::kMaxLine is cut off.
// A write that fails (the peer closed or reset) does not close it at once: what the peer sent
// before it went is still read and delivered by the next service(), then it closes naming the
// write's error. A peer's last words (a verdict) are never lost to a heartbeat sent too late.
#pragma once

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "lib/common/defaults.h"

namespace accel::launch::job {

class LineConnection {
 public:
  explicit LineConnection(int fd);
  ~LineConnection();
  LineConnection(const LineConnection&) = delete;
  LineConnection& operator=(const LineConnection&) = delete;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  bool wantsToWrite() const { return !out_.empty() && write_error_.empty(); }
  size_t queued() const { return out_.size(); }  // bytes not yet written
  // Its entry for poll(): readable, and writable while something is queued.
  pollfd pollFd() const { return {fd_, static_cast<short>(POLLIN | (wantsToWrite() ? POLLOUT : 0)), 0}; }
  // Queues one line (without its newline) and writes what the socket takes now.
  void send(const std::string& line);
  // After poll: writes what is queued, reads what arrived. Returns the complete lines; sets
  // closed() when the peer closed, the connection broke or a line grew too long (`error` says
  // which). After a failed write it reads all that is left, returns it and closes.
  std::vector<std::string> service(short revents);
  bool closed() const { return closed_; }
  const std::string& error() const { return error_; }
  // When a line last arrived or was last sent (heartbeats are due after silence), and when the
  // connection was made.
  std::chrono::steady_clock::time_point lastHeard() const { return last_heard_; }
  std::chrono::steady_clock::time_point lastSent() const { return last_sent_; }
  std::chrono::steady_clock::time_point since() const { return since_; }
  void close();

 private:
  void flush();
  // Reads once; false when the connection ended (closed() says why) or nothing was there.
  bool receive(std::vector<std::string>& lines);
  int fd_;
  std::string in_, out_;
  std::string write_error_;
  bool closed_ = false;
  std::string error_;
  std::chrono::steady_clock::time_point since_, last_heard_, last_sent_;
};

// How often each side of the job channel sends a heartbeat: a sixth of the timeout, so that
// several can be late before the peer counts as lost.
inline std::chrono::milliseconds heartbeatInterval(double timeout_seconds) {
  return std::max(std::chrono::milliseconds(1), defaults::fromSeconds(timeout_seconds) / 6);
}

}  // namespace accel::launch::job
