// SPDX-License-Identifier: Apache-2.0
// Workers ask their launcher what became of a rank (runtime/state/rank_inquiry.h): after a
// collective failed, a rank asks about the ranks it waited for, and the launcher answers from
// what it sees (the worker's process state, or its exit) or, for another machine's rank, asks
// that machine's launcher over the job channel (job_link.h: ask, tell). `accel stacks` asks
// "stacks SECONDS" there (the tools' limit, at most 600) and gets every rank's stack in the job
// (stack_collector.h's encoding, one line of any length), when it runs as the launcher's user or
// as root; it waits SECONDS plus a minute at most. `accel top` asks "status" there, as the same
// users only, and gets the job's view (watch/status_json.h jobViewJson) within kStatusPatience.
//
// The launcher listens on an abstract Unix socket (no file is left behind; only processes in
// its network namespace reach it), named in the workers' ACCEL_LAUNCHER_SOCKET. A question is
// one line "rank R"; the answer is one line of text. The server trusts nothing: at most
// kMaxConnections at once (a new one closes the oldest), a question of at most 64 bytes (a
// connection's unread line at most job::kMaxLine), a connection not answered within kPatience
// is answered "no answer" and closed, and out of descriptors accepting pauses.
// Single-threaded, polled by the supervisor.
#pragma once

#include <poll.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/job/line_connection.h"

namespace accel::launch::supervise {

class RankQuestions {
 public:
  static constexpr int kStacks = -1, kStatus = -2;
  static constexpr std::chrono::seconds kStatusPatience{10};
  struct Question {
    long long id;
    int rank;            // kStacks for "stacks", kStatus for "status"
    double seconds = 0;  // "stacks": the tools' limit
  };

  // Listens on "@accel-<tag>-<pid>"; throws Error when it cannot.
  explicit RankQuestions(const std::string& tag);
  ~RankQuestions();
  RankQuestions(const RankQuestions&) = delete;
  RankQuestions& operator=(const RankQuestions&) = delete;

  // ACCEL_LAUNCHER_SOCKET's value: the name with '@' for the abstract namespace's leading NUL.
  const std::string& name() const { return name_; }

  void addPollFds(std::vector<pollfd>& fds) const;
  int timeoutMs() const;  // until the oldest question's patience runs out; -1 when none waits
  // After poll: accepts and reads; returns the new questions, each to be answered once.
  std::vector<Question> service(const std::vector<pollfd>& fds);
  void answer(long long id, const std::string& text);

 private:
  struct Asker {
    std::unique_ptr<job::LineConnection> conn;
    long long id = 0;  // 0 until it asked
    std::chrono::seconds patience{0};
    bool stacks = false;
    bool closing = false;  // answered: closed once the answer is written
  };
  void accept();
  std::optional<Question> read(Asker& a, const std::string& line);
  void expire();

  std::string name_;
  int listen_fd_ = -1;
  std::deque<Asker> askers_;  // oldest first
  std::chrono::steady_clock::time_point paused_until_{};
  long long next_id_ = 1;
};

}  // namespace accel::launch::supervise
