// SPDX-License-Identifier: Apache-2.0
// The job channel's wire: one JSON object per line over TCP, each with a type "t":
//   member -> hub: join {machine, host, pid, machines, world, token}, failed {failure, replaces},
//                  interrupted {signal}, ended {round, ok}
//   hub -> member: start {port}, refuse {message, hint}, stop {round, why},
//                  restart {round, port, failure}, end {code, failure, signal, message, hint}
//   both ways:     hb (a heartbeat; any line counts as one)
// A Line connection buffers both ways on a non-blocking socket, so a slow or vanished peer never
// blocks the launcher's single thread.
#pragma once

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/defaults.h"

#include "lib/launch/job_link.h"

namespace accel {

class LineConnection {
 public:
  explicit LineConnection(int fd);
  ~LineConnection();
  LineConnection(const LineConnection&) = delete;
  LineConnection& operator=(const LineConnection&) = delete;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  bool wantsToWrite() const { return !out_.empty(); }
  // Its entry for poll(): readable, and writable while something is queued.
  pollfd pollFd() const { return {fd_, static_cast<short>(POLLIN | (wantsToWrite() ? POLLOUT : 0)), 0}; }
  // Queues one message and writes what the socket takes now.
  void send(const nlohmann::json& message);
  // After poll: writes what is queued, reads what arrived. Returns the complete messages; sets
  // closed() when the peer closed or the connection broke (`error` says how). A line that is
  // not a JSON object breaks the connection (a stranger on the port).
  std::vector<nlohmann::json> service(short revents);
  bool closed() const { return closed_; }
  const std::string& error() const { return error_; }
  // When a line last arrived or was last sent (heartbeats are due after silence).
  std::chrono::steady_clock::time_point lastHeard() const { return last_heard_; }
  std::chrono::steady_clock::time_point lastSent() const { return last_sent_; }
  void close();

 private:
  void flush();
  int fd_;
  std::string in_, out_;
  bool closed_ = false;
  std::string error_;
  std::chrono::steady_clock::time_point last_heard_, last_sent_;
};

// How often each side of the job channel sends a heartbeat: a sixth of the timeout, so that
// several can be late before the peer counts as lost.
inline std::chrono::milliseconds heartbeatInterval(double timeout_seconds) {
  return std::max(std::chrono::milliseconds(1), defaults::fromSeconds(timeout_seconds) / 6);
}

// Reads the launcher's signalfd (signal_channel.h) when poll says it is readable: the first
// interrupting signal (SIGINT, SIGTERM, SIGHUP), or 0. Used while no worker runs yet.
int readInterrupt(int signal_fd, short revents);

nlohmann::json failureToJson(const WorkerFailure& f);
WorkerFailure failureFromJson(const nlohmann::json& j);
// "rank 3 on machine 1 (gpu07)".
std::string describeWorker(const WorkerFailure& f);

// Failures reported in a round, in the order they arrived, and the job's first (job_link.h's rule).
class FailureLedger {
 public:
  void add(const WorkerFailure& f, bool replaces, double at_seconds);
  bool empty() const { return reports_.empty(); }
  const WorkerFailure& first() const;
  void clear() { reports_.clear(); }

 private:
  struct Report {
    WorkerFailure failure;
    double at;
  };
  std::vector<Report> reports_;
};

// What the job does once every machine's round ended: End (0, the interrupt, a lost machine, or
// the first failure when no restart is left or possible) or Restart (round + 1, port 0).
struct RoundOutcome {
  bool all_succeeded = false;
  int signal = 0;             // an interrupt, anywhere
  std::string lost, lost_hint;  // a machine that vanished, or a refused join (job cannot restart)
  const FailureLedger* failures = nullptr;
};
JobEvent decideRound(int round, int max_restarts, const RoundOutcome& outcome);

}  // namespace accel
