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

  // `timeout` may be Clock::duration::max() for a clock that only measures (ran()).
  RunningDeadline(Clock::duration timeout, Clock::duration check_every, Clock::time_point start = Clock::now())
      : timeout_(timeout), every_(check_every), start_(start), last_(start) {}

  // The time run since the start; notes the gap since the last check first.
  Clock::duration ran(Clock::time_point now = Clock::now()) {
    note(now);
    return now - start_ - absent_;
  }
  // Whether the deadline has passed.
  bool passed(Clock::time_point now = Clock::now()) { return ran(now) >= timeout_; }
  // How long a wait may sleep now: until the deadline, and at most `check_every`.
  Clock::duration sleep(Clock::time_point now = Clock::now()) {
    const auto left = timeout_ - ran(now);
    return std::clamp<Clock::duration>(left, Clock::duration::zero(), every_);
  }
  // The time since the last check went on the waiter's own work (a slow question it asked),
  // not on its absence: it counts.
  void worked(Clock::time_point now = Clock::now()) { last_ = now; }
  // The time not counted so far.
  Clock::duration absent() const { return absent_; }

 private:
  void note(Clock::time_point now) {
    const auto gap = now - last_;
    last_ = now;
    if (gap > every_ + kGrace) absent_ += gap - every_;
  }
  Clock::duration timeout_;
  Clock::duration every_;
  Clock::time_point start_;
  Clock::time_point last_;
  Clock::duration absent_{};
};

}  // namespace accel
