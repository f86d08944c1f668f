// SPDX-License-Identifier: Apache-2.0
// What the job decides at the end of a round, the same on one machine (SoloLink) and on machine
// 0 of several (JobHub): which failure was the job's first (job_link.h's rule), and whether the
// job restarts or ends, with which code. Pure logic.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/job/job_link.h"
#include "lib/launch/job/restart_policy.h"

namespace accel::launch::job {

// "rank 3 on machine 1 (gpu07)".
std::string describeWorker(const WorkerFailure& f);

// Whether a failure reads like a collective that waited too long for its peers, so that where
// the other ranks are is worth reading before they are stopped: libaccel_runtime's "timed out
// after N s" and "did not arrive within N s", Gloo's "Timed out waiting", NCCL's watchdog
// "timeout", in its stderr tail or recorded exception.
bool timedOutInCollective(const WorkerFailure& f);

// Failures reported in a round, in the order they arrived, and the job's first.
class FailureLedger {
 public:
  void add(const WorkerFailure& f, bool replaces, double at_seconds);
  bool empty() const { return reports_.empty(); }
  const WorkerFailure& first() const;
  void clear() { reports_.clear(); }

 private:
  struct Report {
    WorkerFailure failure;
    double at;
  };
  std::vector<Report> reports_;
};

// What the job does once every machine's round ended: End (0, the interrupt, a lost machine, or
// the first failure or a hang when no restart is left or the policy refuses one) or Restart
// (round + 1, restarts + 1, port 0; a hang's restart says why in its message).
struct RoundOutcome {
  bool all_succeeded = false;
  int signal = 0;               // an interrupt, anywhere
  std::string lost, lost_hint;  // a machine that vanished, or a refused join (job cannot restart)
  std::string hang, hang_hint;  // --hang_timeout stopped the round
  const FailureLedger* failures = nullptr;
  double seconds = 0;    // how long the round ran before its first failure or its hang
  long long saved = -1;  // the highest step of a checkpoint saved so far, in any round; -1: none seen
};
JobEvent decideRound(int round, int restarts, int max_restarts, const RoundOutcome& outcome, RestartPolicy& policy);

}  // namespace accel::launch::job
