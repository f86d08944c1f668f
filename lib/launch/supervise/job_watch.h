// SPDX-License-Identifier: Apache-2.0
// Everything that lets people watch this machine's part of the job (lib/launch/watch/), beside
// the supervisor's loop: the event log (job_story.h), /metrics (metrics_door.h), `accel top`'s
// statuses (status_reports.h), and every machine's logs in machine 0's --log_dir (a member's
// forwarder, log_forwarder.h; machine 0's collector, log_collector.h). The supervisor tells it
// what happens; it never changes what the job does. Single-threaded.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "lib/launch/job/job_link.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/flight_board.h"
#include "lib/launch/supervise/job_story.h"
#include "lib/launch/supervise/launch_report.h"
#include "lib/launch/supervise/log_collector.h"
#include "lib/launch/supervise/log_forwarder.h"
#include "lib/launch/supervise/metrics_door.h"
#include "lib/launch/supervise/rank_answers.h"
#include "lib/launch/supervise/status_reports.h"
#include "lib/launch/supervise/worker_output.h"

namespace accel::launch::supervise {

class JobWatch {
 public:
  // `plan` is the supervisor's round plan (rebuilt each round); `workers` and `flights` its own;
  // lines to say go through `report`.
  JobWatch(const plan::LaunchPlan& plan, const std::vector<WorkerProcess>& workers, const FlightBoard& flights,
           const LaunchReport& report);

  // Once the link and the answers exist: the event log (in `run_dir` too, "" for none),
  // /metrics, the statuses, the collector.
  void open(const std::string& run_dir, job::JobLink& link, RankAnswers& answers);
  JobStory& story() { return story_; }
  // Round `round` starts now (its workers next).
  void roundStarts(int round, int restarts);
  // Where the round's workers' log bytes also go: machine 0, from a member with --log_dir.
  LogForward forward();
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  void service(const std::vector<pollfd>& fds);
  // An event of the link that is the watchers' (another machine's event, status or logs): true.
  bool follow(const job::JobEvent& event);
  // Every worker of this machine exited: the logs held go to machine 0 before the link hears so.
  void roundEnds();
  // The launch ends with `code`: the last event, and /metrics for --metrics_linger.
  void ended(const job::JobEvent& end, int code, int signal_fd);

 private:
  JobMoment moment(const job::JobEvent* end = nullptr, int code = 0) const;
  void say(const std::string& line) const { report_.say(line); }

  const plan::LaunchPlan& plan_;
  const std::vector<WorkerProcess>& workers_;
  const FlightBoard& flights_;
  const LaunchReport& report_;
  JobStory story_;
  MetricsDoor metrics_;
  LogForwarder forwarder_;
  LogCollector collector_;
  std::unique_ptr<StatusReports> statuses_;
  job::JobLink* link_ = nullptr;
  int round_ = 0;
  int restarts_ = 0;
  const double launched_;
  std::chrono::steady_clock::time_point round_start_ = std::chrono::steady_clock::now();
};

}  // namespace accel::launch::supervise
