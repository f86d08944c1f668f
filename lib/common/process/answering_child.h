// SPDX-License-Identifier: Apache-2.0
// A process of accel's own code that answers once, on a pipe, beside a single-threaded caller's
// poll loop: the stack tools' collecting process (lib/launch/stacks/stack_collector.h), the
// straggler watch's look at torch's records (lib/launch/supervise/torch_arrivals.h). start()
// forks `body` (answeringChild below) with the pipe's write end; the caller polls the read end
// with its other descriptors; service() reads what came and gives the answer once the child has
// closed its end, or a timed-out answer once `give_up_at` passed (the child and its group are
// then killed). At most `max_bytes` are kept. Single-threaded; the caller must be too (it forks).
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/process/child.h"

namespace accel::process {

// The child as spawnChild starts it: `body` in a process group of its own (stop() ends what it
// started with it), killed when its parent dies, as the workers are.
ChildSpec answeringChild(std::function<int()> body);

class AnsweringChild {
 public:
  using Clock = std::chrono::steady_clock;
  struct Answer {
    std::string text;
    bool timed_out = false;
  };

  AnsweringChild() = default;
  ~AnsweringChild();  // one still running is killed
  AnsweringChild(const AnsweringChild&) = delete;
  AnsweringChild& operator=(const AnsweringChild&) = delete;

  // Throws Error naming why it could not start (the pipe, the fork).
  void start(const std::function<int(int out_fd)>& body, Clock::time_point give_up_at, size_t max_bytes);
  bool running() const { return fd_ >= 0; }
  pid_t pid() const { return pid_; }  // while it runs, else 0
  // Its pipe beside the caller's descriptors; lowers `timeout_ms` to when it is given up on.
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  // After poll (`fds` the whole array): the answer once it is whole or given up on, else nullopt.
  std::optional<Answer> service(const std::vector<pollfd>& fds);
  void stop();

 private:
  pid_t pid_ = 0;
  int fd_ = -1;
  std::string output_;
  size_t max_ = 0;
  Clock::time_point give_up_at_{};
};

}  // namespace accel::process
