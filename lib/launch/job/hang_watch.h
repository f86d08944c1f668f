// SPDX-License-Identifier: Apache-2.0
// --hang_timeout, judged by the launcher that decides for the job (one alone, or machine 0): when
// the job last made progress — some rank, on any machine, printed something or finished a
// collective of libaccel_runtime (job_link.h progressed()) — and whether it has gone the timeout
// without. A round's start counts as progress; time while the job is held (Ctrl-Z) does not
// count. Single-threaded.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include <fmt/format.h>

#include "lib/common/defaults.h"

namespace accel::launch::job {

class HangWatch {
 public:
  using Clock = std::chrono::steady_clock;

  explicit HangWatch(double timeout_seconds) : timeout_(timeout_seconds) {}

  void progress() { last_ = Clock::now(); }
  // A round starts: the clock starts again, and the watch can fire again.
  void restart() {
    last_ = Clock::now();
    fired_ = false;
  }
  void hold(bool held) {
    held_ = held;
    if (!held_) last_ = Clock::now();
  }
  // The job has gone the timeout without progress, and the watch has not fired this round.
  bool overdue() const { return armed() && Clock::now() - last_ >= defaults::fromSeconds(timeout_); }
  void fire() { fired_ = true; }
  // Milliseconds until overdue() turns true; -1 when it cannot.
  int timeoutMs() const {
    if (!armed()) return -1;
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(last_ + defaults::fromSeconds(timeout_) - Clock::now());
    return static_cast<int>(std::clamp<long long>(left.count(), 0, 60'000));
  }
  std::string why() const {
    return fmt::format("{} for {:g} s (--hang_timeout: nothing printed, no collective finished)", kHung, timeout_);
  }
  // Whether a stop's reason is a why() of this watch.
  static bool isHang(const std::string& why) { return why.rfind(kHung, 0) == 0; }

  // The hint of a job stopped for `hung` (its why(), or "" when it did not hang).
  static std::string hint(const std::string& hung) {
    return hung.empty() ? ""
                        : "a rank is stuck, or works longer than --hang_timeout without a word: the stacks below say "
                          "where each rank was";
  }

 private:
  static constexpr const char* kHung = "no rank made progress";
  bool armed() const { return timeout_ > 0 && !held_ && !fired_; }

  double timeout_;
  Clock::time_point last_ = Clock::now();
  bool held_ = false, fired_ = false;
};

// How often a machine tells machine 0 that its ranks made progress, at most.
inline constexpr std::chrono::milliseconds kProgressEvery{500};

}  // namespace accel::launch::job
