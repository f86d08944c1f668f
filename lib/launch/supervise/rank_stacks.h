// SPDX-License-Identifier: Apache-2.0
// The supervisor's share of every rank's stack (job_link.h: Collect and Stacks events). When the
// job asks, it reads the stacks of this machine's running ranks beside the supervisor's loop
// (stacks/stack_collector.h) and hands them to the link; collections asked for while one runs
// share its result. A gathering that comes before a stop (Stacks, id 0) is kept in full in a
// file, attempt_<round>/stacks.txt in the launch's folder of --log_dir, else in $TMPDIR/<run id>,
// and summed up in a line per rank for the failure summary (LaunchReport). Single-threaded.
#pragma once

#include <poll.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/flight/flight_verdict.h"
#include "lib/launch/job/job_link.h"
#include "lib/launch/stacks/stack_collector.h"
#include "lib/launch/supervise/flight_board.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

class RankStacks {
 public:
  // `run_dir`: this launch's folder in --log_dir ("" for none: the stacks go to TMPDIR).
  RankStacks(const std::vector<WorkerProcess>& workers, job::JobLink& link, const plan::LaunchPlan& plan,
             std::string run_dir, const FlightBoard& flights)
      : workers_(workers), link_(link), plan_(plan), run_dir_(std::move(run_dir)), flights_(flights) {}

  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  void service(const std::vector<pollfd>& fds);
  // A Collect event, or a Stacks event that comes before a stop (id 0): true when handled.
  bool follow(const job::JobEvent& event, int round);
  // The failure summary's lines about the last stacks before a stop, taken once.
  std::vector<std::string> takeSummary() { return std::exchange(summary_, {}); }
  pid_t collectorPid() const { return collector_.pid(); }

  // A failure that reads like a collective's timeout (job_round.h): the job's stop comes once
  // every rank's stack is read, and this machine holds its own (true) until then, or until the
  // stacks timeout and its slack passed (stopDue()). released(): the workers are being stopped.
  bool holdStop(const job::WorkerFailure& failure);
  bool stopDue() const { return stop_due_ && std::chrono::steady_clock::now() >= *stop_due_; }
  void released() { stop_due_.reset(); }

 private:
  void collect(long long id, double seconds, int round);
  stacks::CollectBefore torchFlights(double seconds, int round) const;
  void keepTimeoutDump(int rank, int round);
  std::string keep(const stacks::GatheredStacks& stacks, int round) const;
  std::string keepFlights(const stacks::GatheredStacks& stacks, const std::vector<flight::RankRecord>& records,
                          int round) const;
  std::string roundDir(int round) const;  // the round's folder in --log_dir's, else in $TMPDIR/<run id>

  const std::vector<WorkerProcess>& workers_;
  job::JobLink& link_;
  const plan::LaunchPlan& plan_;
  std::string run_dir_;
  const FlightBoard& flights_;
  std::map<int, std::string> flight_texts_;  // the rings as read when the running collection began, by rank
  std::vector<stacks::RunningRank> ended_;   // the ranks that had ended then: a record, no stack
  stacks::StackCollector collector_;
  std::vector<long long> waiting_;  // the collections the running one answers
  std::vector<std::string> summary_;
  std::optional<std::chrono::steady_clock::time_point> stop_due_;
};

// The lines a failure summary shows for stacks gathered before a stop, `kept_in` naming the file
// with every stack in full (or why there is none).
std::vector<std::string> stacksSummary(const stacks::GatheredStacks& stacks, const std::string& kept_in);

// The ranks' flight records that came with their stacks (`host`: where a stack names none).
std::vector<flight::RankRecord> flightRecords(const stacks::GatheredStacks& stacks, const std::string& host);
// Where the ranks part (flight/flight_verdict.h), for the failure summary, and which of the
// `world_size` ranks came with no stack at all (their machine sent none); nothing when `kept_in`
// is "" (no rank sent a record).
std::vector<std::string> flightSummary(const std::vector<flight::RankRecord>& records, const std::string& kept_in,
                                       int world_size);

}  // namespace accel::launch::supervise
