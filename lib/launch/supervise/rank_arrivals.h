// SPDX-License-Identifier: Apache-2.0
// This machine's part in the straggler watch (flight/straggler_watch.h): about once a second its
// workers' flight recorder rings (flight_board.h) are read for the collectives they called since
// the last look (flight/arrivals.h), and Python workers' torch records are asked for
// (torch_arrivals.h); each batch goes to the launcher that judges the job: the
// job link sends it to machine 0 (job_link.h sendArrivals), or, on machine 0 and on one machine,
// it is judged here with the other machines' batches as the link brings them. Lines to say come
// back from service() and follow(); summary() at the job's end. Reading a ring costs the workers
// nothing (shared memory, no call into them). Single-threaded.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/flight/arrivals.h"
#include "lib/launch/flight/straggler_watch.h"
#include "lib/launch/job/job_link.h"
#include "lib/launch/supervise/flight_board.h"
#include "lib/launch/supervise/torch_arrivals.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

class RankArrivals {
 public:
  // `plan` is the round's (the supervisor's, rebuilt each round); `workers` this machine's.
  RankArrivals(const plan::LaunchPlan& plan, const FlightBoard& flights, const std::vector<WorkerProcess>& workers);

  bool on() const { return plan_.stragglers.window > 0; }
  // The torch look's pipe, and the milliseconds until the next look, for the supervisor's poll.
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  // Round `round` starts: its ranks number their collectives afresh.
  void newRound(int round);
  // After poll: looks when a look is due, takes a torch look's answer; returns the lines to say.
  std::vector<std::string> service(const std::vector<pollfd>& fds, job::JobLink& link);
  pid_t lookPid() const { return torch_.pid(); }  // the torch look's process while it runs, else 0
  // Another machine's arrivals (a JobEvent of kind Arrivals): the lines to say.
  std::vector<std::string> follow(const job::JobEvent& event);
  // The job's stragglers and every rank's lateness, for the final summary; empty when none was named.
  std::vector<std::string> summary() const { return watch_.summary(); }

 private:
  using Clock = std::chrono::steady_clock;

  const plan::LaunchPlan& plan_;
  const FlightBoard& flights_;
  const std::vector<WorkerProcess>& workers_;
  flight::ArrivalCursor cursor_;
  flight::StragglerWatch watch_;
  std::vector<std::string> judge(flight::Arrivals batch, job::JobLink& link);

  TorchArrivals torch_;
  int round_ = 0;
  bool said_ = false;  // that a torch look cannot start
  Clock::time_point next_ = Clock::now();
};

}  // namespace accel::launch::supervise
