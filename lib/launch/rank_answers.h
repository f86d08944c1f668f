// SPDX-License-Identifier: Apache-2.0
// The supervisor's side of the workers' questions about ranks (rank_questions.h): a rank of
// this machine is described from what the launcher sees of its worker (the process state, or
// how it exited); another machine's rank is asked of that machine's launcher over the job link
// (job_link.h: ask, tell), and an Ask from the link is answered the same way. Single-threaded.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lib/launch/job/job_link.h"
#include "lib/launch/rank_questions.h"
#include "lib/launch/worker_process.h"

namespace accel {

class RankAnswers {
 public:
  RankAnswers(const std::vector<WorkerProcess>& workers, JobLink& link) : workers_(workers), link_(link) {}

  // Listens, and names the socket in every worker's ACCEL_LAUNCHER_SOCKET. Where it cannot
  // (no abstract Unix sockets), returns a warning line and the launch goes on without.
  std::string listen(LaunchPlan& plan);
  // Beside the supervisor's descriptors; lowers `timeout_ms` to when a question expires.
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  void service(const std::vector<pollfd>& fds);
  // An Ask or Answer event of the link, or the Stacks that answer an `accel stacks`, handled:
  // true; any other event: false.
  bool follow(const JobEvent& event);

 private:
  const WorkerProcess* worker(int rank) const;
  std::string describe(int rank) const;

  const std::vector<WorkerProcess>& workers_;
  JobLink& link_;
  const LaunchPlan* plan_ = nullptr;
  std::unique_ptr<RankQuestions> questions_;
};

}  // namespace accel
