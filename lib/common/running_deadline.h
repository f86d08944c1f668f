// SPDX-License-Identifier: Apache-2.0
// A deadline that counts only the time this process was running. A job stopped with Ctrl-Z
// (every worker SIGSTOPped together, then continued) must resume unharmed however long it was
// stopped, while a peer that never comes is still named after the whole timeout. A waiter that
// checks at least every `check_every` sees its own absence as a gap between two checks: the
// part of a gap beyond `check_every` plus kGrace is time it did not run, and the deadline moves
// by it. A process starved of the CPU for that long is treated the same: it could not have
// heard its peers either. Not thread-safe: one waiter owns it.
#pragma once

#include <algorithm>
#include <chrono>

namespace accel {

class RunningDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kGrace = std::chrono::milliseconds(500);

  RunningDeadline(Clock::duration timeout, Clock::duration check_every, Clock::time_point start = Clock::now())
      : at_(start + timeout), every_(check_every), last_(start) {}

  // Whether the deadline has passed; notes the gap since the last check first.
  bool passed(Clock::time_point now = Clock::now()) {
    note(now);
    return now >= at_;
  }
  // How long a wait may sleep now: until the deadline, and at most `check_every`.
  Clock::duration sleep(Clock::time_point now = Clock::now()) {
    note(now);
    return std::clamp<Clock::duration>(at_ - now, Clock::duration::zero(), every_);
  }
  // The time not counted so far.
  Clock::duration absent() const { return absent_; }

 private:
  void note(Clock::time_point now) {
    const auto gap = now - last_;
    last_ = now;
    if (gap <= every_ + kGrace) return;
    absent_ += gap - every_;
    at_ += gap - every_;
  }
  Clock::time_point at_;
  Clock::duration every_;
  Clock::time_point last_;
  Clock::duration absent_{};
};

}  // namespace accel
