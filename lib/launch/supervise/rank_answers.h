// SPDX-License-Identifier: Apache-2.0
// The supervisor's side of the workers' questions about ranks (rank_questions.h): a rank of
// this machine is described from what the launcher sees of its worker (the process state, or
// how it exited); another machine's rank is asked of that machine's launcher over the job link
// (job_link.h: ask, tell), and an Ask from the link is answered the same way. Single-threaded.
#pragma once

#include <functional>

#include <memory>
#include <string>
#include <vector>

#include "lib/launch/job/job_link.h"
#include "lib/launch/supervise/rank_questions.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

class RankAnswers {
 public:
  RankAnswers(const std::vector<WorkerProcess>& workers, job::JobLink& link, const plan::LaunchPlan& plan)
      : workers_(workers), link_(link), plan_(plan) {}

  // Listens, and names the socket in every worker's ACCEL_LAUNCHER_SOCKET. Where it cannot
  // (no abstract Unix sockets), returns a warning line and the launch goes on without.
  std::string listen();
  // ACCEL_LAUNCHER_SOCKET's value, or "" when it could not listen.
  std::string socketName() const;
  // Beside the supervisor's descriptors; lowers `timeout_ms` to when a question expires.
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  void service(const std::vector<pollfd>& fds);
  // An Ask or Answer event of the link, or the Stacks that answer an `accel stacks`, handled:
  // true; any other event: false.
  bool follow(const job::JobEvent& event);
  // "status" questions (`accel top`) go to `ask`, which answers each with answer() once.
  void onStatusQuestion(std::function<void(long long id)> ask) { on_status_ = std::move(ask); }
  void answer(long long id, const std::string& text);

 private:
  const WorkerProcess* worker(int rank) const;
  std::string describe(int rank) const;

  const std::vector<WorkerProcess>& workers_;
  job::JobLink& link_;
  const plan::LaunchPlan& plan_;  // the round's (the supervisor builds each round's anew)
  std::unique_ptr<RankQuestions> questions_;
  std::function<void(long long)> on_status_;
};

}  // namespace accel::launch::supervise
