// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/job_round.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel::launch::job {

std::string describeWorker(const WorkerFailure& f) {
  return fmt::format("{} on machine {} ({})", f.who, f.machine, f.host);
}

bool timedOutInCollective(const WorkerFailure& f) {
  auto says = [](const std::string& line) {
    const std::string l = toLower(line);
    return l.find("timed out") != std::string::npos || l.find("timeout") != std::string::npos ||
           l.find("did not arrive within") != std::string::npos;
  };
  if (says(f.raised)) return true;
  for (const auto* lines : {&f.tail, &f.traceback}) {
    if (std::any_of(lines->begin(), lines->end(), says)) return true;
  }
  return false;
}

void FailureLedger::add(const WorkerFailure& f, bool replaces, double at_seconds) {
  if (replaces) {
    for (auto& r : reports_) {
      if (r.failure.machine == f.machine) return void(r.failure = f);
    }
  }
  reports_.push_back({f, at_seconds});
}

const WorkerFailure& FailureLedger::first() const {
  const Report* first = &reports_.front();
  if (startsWith(first->failure.exit_text, "exited")) {
    for (const auto& r : reports_) {
      if (r.failure.killed_from_outside && r.at - first->at < kKilledFirstWindow) return r.failure;
    }
  }
  return first->failure;
}

JobEvent decideRound(int round, int restarts, int max_restarts, const RoundOutcome& o, RestartPolicy& policy) {
  JobEvent e;
  e.kind = JobEvent::Kind::End;
  if (o.failures && !o.failures->empty()) e.failure = o.failures->first();
  const bool hung = !o.hang.empty() && !e.failure;
  if (o.signal) {
    e.signal = o.signal;
    e.exit_code = 128 + o.signal;
  } else if (!o.lost.empty()) {
    e.exit_code = 1;
    e.message = o.lost;
    e.hint = o.lost_hint;
  } else if (e.failure || hung) {
    const std::string refused = policy.refuseRestart(o.seconds, hung, o.saved);
    if (restarts < max_restarts && refused.empty()) {
      e.kind = JobEvent::Kind::Restart;
      e.round = round + 1;
      e.restarts = restarts + 1;
      if (hung)
        e.message = fmt::format("{}: restarting all workers (restart {} of {})", o.hang, e.restarts, max_restarts);
      return e;
    }
    e.exit_code = e.failure ? e.failure->exit_code : 1;
    e.message = hung ? o.hang : refused;
    e.hint = hung ? o.hang_hint : "";
    if (hung && !refused.empty()) e.hint = refused;
  } else if (!o.all_succeeded) {
    e.exit_code = 1;  // workers stopped for a reason that was not reported: never a silent 0
    e.message = "the round ended with stopped workers and no failure reported";
  }
  return e;
}

}  // namespace accel::launch::job
