// SPDX-License-Identifier: Apache-2.0
// The barrier the members of a shared-memory segment meet at between the phases of every
// collective. Each member counts its steps in its own cache line; sync() publishes the next one
// and waits until every other member has reached it: a short spin first (members usually arrive
// almost together), then sleep on the laggard's counter as a futex, because
// on a machine with few cores a spinning rank steals the core its peer needs to get there.
// While it sleeps it watches that member: a member whose process exited, or the timeout, ends
// the wait with a CommError naming it, never a hang. A socket's close would say the same for
// Gloo; shared memory has no such signal, so liveness comes from the peer's pidfd. A member whose
// operation failed otherwise (a leader's step between hosts) marks itself abandoned, with the
// same effect.
// Used by one thread at a time (the group's operation queue serialises them).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/comm/collective_call.h"
#include "runtime/comm/shm/shm_segment.h"

namespace accel::comm::shm {

// The members' calls differed at `step` (every member throws it at the same step).
struct ShmCallsDiffer {
  uint32_t step;
};

class ShmSteps {
 public:
  // `names[m]`: member m's rank as the messages should call it (its rank in the group).
  ShmSteps(ShmSegment& segment, int member, std::vector<int> names, std::chrono::milliseconds timeout);

  // An operation begins: the next sync() also checks that every member made this same call (its
  // fingerprint sits in the member's cache line, beside the step the others read anyway) and
  // throws ShmCallsDiffer, before anyone reads another's data, when one did not.
  void expect(const CollectiveCall& call);
  void sync();
  // This member's operation failed before its next step: members waiting for it fail at once,
  // naming it, instead of at the timeout.
  void abandon();
  // The rank (as names[] calls it) whose absence failed the last sync, with its state in the
  // error; -1 when none did.
  int lastMissing() const { return last_missing_; }
  // The parity of the areas written before the next sync() and read after it (shm_backend.cc).
  int writeParity() const { return static_cast<int>((step_ + 1) & 1u); }
  int readParity() const { return static_cast<int>(step_ & 1u); }

 private:
  void waitFor(int m, uint32_t step);
  bool reached(int m, uint32_t step) const;
  [[noreturn]] void fail(int m, uint32_t step, const std::string& why);

  ShmSegment& seg_;
  int me_;
  std::vector<int> names_;
  std::chrono::milliseconds timeout_;
  uint32_t step_ = 0;
  uint64_t expected_ = 0;  // the fingerprint expect() set
  bool checking_ = false;  // the next sync() compares fingerprints
  int last_missing_ = -1;
};

}  // namespace accel::comm::shm
