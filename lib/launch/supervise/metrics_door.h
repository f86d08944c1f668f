// SPDX-License-Identifier: Apache-2.0
// This launcher's /metrics (watch/metrics_server.h) with --metrics_port: served from the
// supervisor's loop while the job runs, each scrape rendering the machine's status at that
// moment (machine_status.h), and with --metrics_linger for that long after the job ended, its
// final values (exit codes, the verdict) standing, until the time is up or a signal comes.
// Single-threaded.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "lib/launch/job/job_link.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/flight_board.h"
#include "lib/launch/supervise/machine_status.h"
#include "lib/launch/supervise/worker_process.h"
#include "lib/launch/watch/metrics_server.h"

namespace accel::launch::supervise {

class MetricsDoor {
 public:
  // `plan` is the supervisor's round plan; `workers` and `flights` its own.
  MetricsDoor(const plan::LaunchPlan& plan, const std::vector<WorkerProcess>& workers, const FlightBoard& flights)
      : plan_(plan), workers_(workers), flights_(flights) {}

  // Listens where the plan says (nothing without --metrics_port); returns the line to say: where
  // /metrics is, or why it is not served.
  std::string open();
  bool listening() const { return server_.listening(); }
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const { server_.addPollFds(fds, timeout_ms); }
  void service(const std::vector<pollfd>& fds, const JobMoment& moment);
  // After the job ended: serves `moment` (ended) for --metrics_linger seconds, or until a signal
  // arrives on `signal_fd` (Ctrl-C ends it early), still writing to `link` what it holds.
  void linger(int signal_fd, const JobMoment& moment, job::JobLink& link);

 private:
  const plan::LaunchPlan& plan_;
  const std::vector<WorkerProcess>& workers_;
  const FlightBoard& flights_;
  watch::MetricsServer server_;
  // The last rendering, served again to scrapes within kFresh: a flood of scrapes costs one
  // rendering (and one look at the processes) a kFresh.
  static constexpr std::chrono::milliseconds kFresh{500};
  std::string rendered_;
  std::chrono::steady_clock::time_point rendered_at_{};
  bool rendered_ended_ = false;
};

}  // namespace accel::launch::supervise
