// SPDX-License-Identifier: Apache-2.0
// Notices that this launcher itself did not run for a while (stopped by SIGSTOP or Ctrl-Z, or
// starved of the CPU). Its loop services the job link at least every heartbeat interval, so a
// gap of half the heartbeat timeout or more between two services was this launcher's absence,
// not the other machines' silence: silence counts again from its return, and a loss that the
// absence caused is named so. Single-threaded.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/launch/job/line_connection.h"

namespace accel::launch::job {

class OwnAbsence {
 public:
  using Clock = std::chrono::steady_clock;

  // `who`: "machine 1", as the hint names this launcher.
  OwnAbsence(double timeout_seconds, std::string who) : timeout_(timeout_seconds), who_(std::move(who)) {}

  // At the start of every service of the link.
  void tick() {
    const auto now = Clock::now();
    const auto gap = now - last_tick_;
    last_tick_ = now;
    if (gap < defaults::fromSeconds(timeout_) / 2) return;
    back_at_ = now;
    if (gap >= defaults::fromSeconds(timeout_)) absent_for_ = std::chrono::duration<double>(gap).count();
  }
  // The job was held (job_link.h hold()) until now: silence counts again from here.
  void resumed() { back_at_ = Clock::now(); }
  // How long `c`'s peer has been silent while this launcher was there to hear it.
  Clock::duration silence(const LineConnection& c) const { return Clock::now() - std::max(c.lastHeard(), back_at_); }
  // Why the others lost this launcher, when an absence longer than the timeout ended recently.
  std::string hint() const {
    if (absent_for_ == 0 || Clock::now() - back_at_ > 2 * defaults::fromSeconds(timeout_)) return "";
    return fmt::format(
        "this launcher ({}) was itself not running for {:.0f} s (stopped with SIGSTOP or Ctrl-Z, or "
        "starved of CPU), longer than the heartbeat timeout ({:g} s): the others counted it as lost",
        who_, absent_for_, timeout_);
  }

 private:
  double timeout_;
  std::string who_;
  Clock::time_point last_tick_ = Clock::now();
  Clock::time_point back_at_{};
  double absent_for_ = 0;
};

}  // namespace accel::launch::job
