// SPDX-License-Identifier: Apache-2.0
// The job's view for `accel top` (watch/status_json.h), wherever it is asked. Each member sends
// its machine's status to machine 0 about once a second; machine 0 (or the only machine) answers
// a "status" question on its socket (rank_questions.h) with its own status and every other
// machine's last, and a member relays the question to machine 0 (job_link.h askStatus) and its
// answer back, or answers with its own machine alone, saying so, where machine 0 cannot be asked.
// Single-threaded, beside the supervisor's loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "lib/launch/job/job_link.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/rank_answers.h"
#include "lib/launch/watch/job_status.h"

namespace accel::launch::supervise {

class StatusReports {
 public:
  using Own = std::function<watch::MachineStatus()>;
  // `plan` is the supervisor's round plan; `own` reads this machine's status now.
  StatusReports(const plan::LaunchPlan& plan, job::JobLink& link, RankAnswers& answers, Own own);

  // The milliseconds until this machine's next status is due to machine 0.
  void addTimeout(int& timeout_ms) const;
  // Sends this machine's status when due (a member).
  void service();
  // A StatusAsked (machine 0) or StatusAnswer (a member) event, handled: true.
  bool follow(const job::JobEvent& event);

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kEvery{1};
  bool member() const { return plan_.machine_rank != 0; }
  void asked(long long id);
  // This machine's status and the others' last: the job's view as JSON text, cut to `max` bytes.
  std::string view(const std::string& note = "", size_t max = SIZE_MAX) const;

  const plan::LaunchPlan& plan_;
  job::JobLink& link_;
  RankAnswers& answers_;
  Own own_;
  Clock::time_point next_ = Clock::now();
};

}  // namespace accel::launch::supervise
