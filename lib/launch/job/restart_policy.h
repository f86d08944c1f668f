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
//   - a restart that made no progress (no checkpoint saved with a step beyond the best one before
//     it, as libaccel_runtime's workers note them on the progress board) counts against
//     --max_no_progress_restarts; after that many in a row the job ends. Jobs whose workers never
//     note a checkpoint (no libaccel_runtime) are not judged;
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
  double startup_timeout = 30;       // seconds; 0: no failure is a start-up failure
  int max_startup_failures = 3;      // in a row; 0: no limit
  int max_machine_failures = 3;      // rounds in a row; 0: no machine is asked to leave
  int max_no_progress_restarts = 3;  // in a row; 0: no limit
};

inline RestartRules rulesOf(const plan::LaunchPlan& p) {
  return {p.restart_hangs, p.startup_timeout, p.max_startup_failures, p.max_machine_failures,
          p.max_no_progress_restarts};
}

class RestartPolicy {
 public:
  explicit RestartPolicy(const RestartRules& rules) : rules_(rules) {}
  const RestartRules& rules() const { return rules_; }
  // A round that failed after `seconds`, or hung, with `saved` the highest checkpoint step seen
  // so far (-1: none): "" when it may restart (where --max_restarts leaves one), else why the
  // job ends instead.
  std::string refuseRestart(double seconds, bool hung, long long saved);
  // The round's first failure was on `machine` (an identity that outlives rounds: host and
  // launcher pid): true once that machine's workers failed first in max_machine_failures rounds
  // in a row.
  bool failedAgain(const std::string& machine);
  // "its workers failed first in 3 rounds in a row (--max_machine_failures 3)".
  std::string leaveReason() const;

 private:
  // The no-progress rule's part of refuseRestart.
  std::string noProgress(long long saved);

  RestartRules rules_;
  int startup_failures_ = 0;
  long long best_saved_ = -1;  // before the round that just ended
  int no_progress_ = 0;
  std::string failing_machine_;
  int machine_failures_ = 0;
};

}  // namespace accel::launch::job
