// SPDX-License-Identifier: Apache-2.0
// Machine 0's door on the job port (job_hub.h): it accepts connections and lets through only
// the launchers of this job. Anyone who can reach the port can connect, so nothing a connection
// sends is trusted before its first line proved it knows the job's token:
//   - the first line must be a join (job_messages.h) carrying the token, compared in constant
//     time; nothing else of the line is read before the token matched;
//   - a launcher with the token but another protocol version is passed on as such (the hub
//     refuses the job, naming both versions); one of this version must send a valid join;
//   - anything else (other bytes, another token, a malformed join, silence for `auth_timeout`)
//     closes the connection with a one-line note. Notes are at most one a second; the rest are
//     counted into the next one, so a flood cannot fill the log;
//   - a launcher sends its join with its connect, and a new connection is read as soon as it is
//     accepted, so a real machine is let in before strangers could push it out; at most
//     `max_waiting` connections then wait for their first line: a new one pushes out the oldest
//     once that has had a second to speak, else is closed itself, without a word (a launcher
//     whose connection closes before the start connects again: job_member.h);
//   - when the process runs out of descriptors, the oldest waiting connection is closed to make
//     room, or, with none waiting, accepting pauses for `backoff` instead of spinning.
// The token keeps out whoever does not know it: without --rdzv_token it is derived from
// main_process_ip:port (plan/build.cc), which keeps other jobs out, not a person who knows the
// address and this code.
// Single-threaded, polled by the hub.
#pragma once

#include <poll.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lib/launch/job/job_messages.h"
#include "lib/launch/job/line_connection.h"

namespace accel::launch::job {

class HubDoor {
 public:
  struct Limits {
    size_t max_waiting = 16;
    std::chrono::milliseconds auth_timeout = std::chrono::seconds(5);
    std::chrono::milliseconds backoff = std::chrono::milliseconds(200);
  };
  // A launcher of this job and version, and its join.
  struct Entrant {
    std::unique_ptr<LineConnection> conn;
    job::Join join;
  };
  // A launcher of this job (the token matched) that speaks another protocol version.
  struct OtherVersion {
    std::unique_ptr<LineConnection> conn;
    job::Hello hello;
  };
  using Note = std::function<void(const std::string& line)>;

  // `listen_fd`: non-blocking, listening; the door does not own it.
  HubDoor(int listen_fd, std::string token, Limits limits, Note note);

  void addPollFds(std::vector<pollfd>& fds) const;
  // Until the next connection's time is up, or the pause ends; -1 when nothing is due.
  int timeoutMs() const;
  // After poll: accepts, reads the waiting connections and closes the ones whose time is up.
  void service(const std::vector<pollfd>& fds, std::vector<Entrant>& entrants, std::vector<OtherVersion>& others);
  size_t waiting() const { return waiting_.size(); }

 private:
  void accept(std::vector<Entrant>& entrants, std::vector<OtherVersion>& others);
  bool settle(std::unique_ptr<LineConnection>& c, short revents, std::vector<Entrant>& entrants,
              std::vector<OtherVersion>& others);
  bool makeRoom();
  void exhausted(int error);
  void closeOldest(const std::string& why);
  // Reads `c`'s first line: true when `c` is done with (passed on, or closed).
  bool admit(std::unique_ptr<LineConnection>& c, const std::string& line, std::vector<Entrant>& entrants,
             std::vector<OtherVersion>& others);
  void refuse(LineConnection& c, const std::string& why);
  void note(const std::string& line);

  int listen_fd_;
  std::string token_;
  Limits limits_;
  Note note_;
  std::deque<std::unique_ptr<LineConnection>> waiting_;  // oldest first
  std::chrono::steady_clock::time_point paused_until_{};
  std::chrono::steady_clock::time_point last_note_{};
  size_t unsaid_ = 0;  // notes held back since the last one
};

}  // namespace accel::launch::job
