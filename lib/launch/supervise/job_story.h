// SPDX-License-Identifier: Apache-2.0
// The job's story as events (watch/event.h), told by this machine's supervisor as things happen:
//   every launcher:   launcher_started, worker_started, worker_exited (code or signal, whether the
//                     launcher stopped it), launcher_ended;
//   machine 0 (or the only machine), which decides for the job: job_started, rendezvous_done,
//                     round_formed (world size, machines), restart (why, how many) and
//                     machines_changed, hang_detected, stacks_gathered, job_ended (code, verdict).
// Each carries the time, the host, the machine and the round. Written where watch/event_log.h
// says; a member also sends its own to machine 0 (job_link.h sendEvent). Single-threaded.
#pragma once

#include <chrono>
#include <string>

#include "lib/launch/job/job_link.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/worker_process.h"
#include "lib/launch/watch/event_log.h"

namespace accel::launch::supervise {

class JobStory {
 public:
  // `plan` is the supervisor's round plan (rebuilt each round: the reference sees the new one).
  JobStory(const plan::LaunchPlan& plan, watch::EventLog::Say say) : plan_(plan), log_(std::move(say)) {}

  // Opens the event log's targets (`run_dir`: the run's folder in --log_dir, or "") and tells
  // launcher_started (and job_started on machine 0). `link` carries a member's events to machine 0.
  void open(const std::string& run_dir, job::JobLink& link);
  // Every machine's launcher joined (or this one alone is the job): rendezvous_done.
  void rendezvousDone();
  // Round `round` starts here after `restarts` failures: round_formed on machine 0.
  void roundStarts(int round, int restarts);
  void workerStarted(const WorkerProcess& w);
  void workerExited(const WorkerProcess& w);
  // The job's decision after a round: a restart for a failure, or a change of machines.
  void decided(const job::JobEvent& decision);
  // Every rank's stack came in; `why` is what stops the job ("" for `accel stacks`).
  void stacksGathered(const std::string& why, size_t stacks, size_t notes);
  // The launch ends with `code`.
  void ended(const job::JobEvent& end, int code);
  // "succeeded", "failed", "interrupted", "hung" (--hang_timeout) or "ended" (a lost machine, a
  // refused join): how the launch that ends with `end` and `code` went.
  static std::string verdictOf(const job::JobEvent& end, int code);
  // The file this machine's events go to ("" for none), for `accel top --events`.
  std::string eventsFile() const { return log_.firstFile(); }
  // Another machine's event (a JobEvent of kind Event), for machine 0's log.
  void follow(const job::JobEvent& event) { log_.recordLine(event.message); }

 private:
  bool decides() const { return plan_.machine_rank == 0; }
  void record(const char* name, nlohmann::ordered_json fields = nlohmann::ordered_json::object());

  const plan::LaunchPlan& plan_;
  watch::EventLog log_;
  job::JobLink* link_ = nullptr;
  int round_ = 0;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

}  // namespace accel::launch::supervise
