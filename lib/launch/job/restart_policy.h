// SPDX-License-Identifier: Apache-2.0
// The rules, beyond --max_restarts, that decide whether a round that failed or hung restarts
// (what NVIDIA's ft_launcher adds to torchrun, and what its users ask for), kept by the link that
// decides for the job (job_link.h):
//   - a hang found by --hang_timeout restarts the round like a failure (--on_hang restart, the
//     default; the stacks read before the stop stay in the round's folder), or ends the job
//     (--on_hang end);
//   - a round whose first failure came within --startup_timeout seconds of its start is a
//     start-up failure (a bad environment, a typo, a missing file): after --max_startup_failures
//     of them in a row the job ends instead of spending its restarts on them;
//   - where machines come and go, a machine whose workers failed first in
//     --max_machine_failures rounds in a row is asked to leave, when the job keeps MIN machines
//     without it (job_hub_rounds.cc).
// Pure state: the caller says what each round was.
#pragma once

#include <string>

#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::job {

struct RestartRules {
  bool restart_hangs = true;
  double startup_timeout = 30;   // seconds; 0: no failure is a start-up failure
  int max_startup_failures = 3;  // in a row; 0: no limit
  int max_machine_failures = 3;  // rounds in a row; 0: no machine is asked to leave
};

inline RestartRules rulesOf(const plan::LaunchPlan& p) {
  return {p.restart_hangs, p.startup_timeout, p.max_startup_failures, p.max_machine_failures};
}

class RestartPolicy {
 public:
  explicit RestartPolicy(const RestartRules& rules) : rules_(rules) {}
  const RestartRules& rules() const { return rules_; }
  // A round that failed after `seconds`, or hung: "" when it may restart (where --max_restarts
  // leaves one), else why the job ends instead.
  std::string refuseRestart(double seconds, bool hung);
  // The round's first failure was on `machine` (an identity that outlives rounds: host and
  // launcher pid): true once that machine's workers failed first in max_machine_failures rounds
  // in a row.
  bool failedAgain(const std::string& machine);
  // "its workers failed first in 3 rounds in a row (--max_machine_failures 3)".
  std::string leaveReason() const;

 private:
  RestartRules rules_;
  int startup_failures_ = 0;
  std::string failing_machine_;
  int machine_failures_ = 0;
};

}  // namespace accel::launch::job
