// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/restart_policy.h"

#include <algorithm>

#include <fmt/format.h>

namespace accel::launch::job {

std::string RestartPolicy::refuseRestart(double seconds, bool hung, long long saved) {
  if (hung && !rules_.restart_hangs) return "the job hung, and --on_hang end ends it";
  if (std::string idle = noProgress(saved); !idle.empty()) return idle;
  const bool startup = !hung && rules_.startup_timeout > 0 && seconds < rules_.startup_timeout;
  startup_failures_ = startup ? startup_failures_ + 1 : 0;
  if (rules_.max_startup_failures <= 0 || startup_failures_ < rules_.max_startup_failures) return "";
  return fmt::format(
      "{} rounds in a row failed within {:g} s of their start (--startup_timeout): a start-up failure (the "
      "environment, the command line, a missing file) that restarts do not mend; not restarting again "
      "(--max_startup_failures {})",
      startup_failures_, rules_.startup_timeout, rules_.max_startup_failures);
}

std::string RestartPolicy::noProgress(long long saved) {
  if (saved < 0) return "";  // no worker notes its checkpoints: progress cannot be judged
  const bool progressed = saved > best_saved_;
  const long long before = best_saved_;
  best_saved_ = std::max(best_saved_, saved);
  no_progress_ = progressed ? 0 : no_progress_ + 1;
  if (rules_.max_no_progress_restarts <= 0 || no_progress_ < rules_.max_no_progress_restarts) return "";
  return fmt::format(
      "{} rounds in a row failed without saving a checkpoint beyond step {}: restarting again would start from it "
      "once more; not restarting again (--max_no_progress_restarts {})",
      no_progress_, before, rules_.max_no_progress_restarts);
}

bool RestartPolicy::failedAgain(const std::string& machine) {
  machine_failures_ = machine == failing_machine_ ? machine_failures_ + 1 : 1;
  failing_machine_ = machine;
  return rules_.max_machine_failures > 0 && machine_failures_ >= rules_.max_machine_failures;
}

std::string RestartPolicy::leaveReason() const {
  return fmt::format("its workers failed first in {} rounds in a row (--max_machine_failures {})", machine_failures_,
                     rules_.max_machine_failures);
}

}  // namespace accel::launch::job
