// SPDX-License-Identifier: Apache-2.0
// After a collective failed: what the failing rank found out about the ranks it waited for,
// handed to the group's diagnose function, which knows more (where those ranks run and what
// their launcher sees of them: runtime/state/rank_inquiry.h). Every question asked after a
// failure gives up within kLookBack, so a failure is reported within its timeout plus a second
// or two whatever else has stopped: a rank whose process is stopped also stops the store when
// it is rank 0, which hosts it.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "runtime/comm/work.h"

namespace accel {

inline constexpr std::chrono::milliseconds kLookBack{750};

struct FailureClues {
  // Ranks (as the group's messages name them) seen not to arrive, whose state the failing
  // transport could not tell itself (shared memory tells its peers' state in its own error).
  std::vector<int> absent;
  std::vector<int> told;      // ranks whose state the transport's own error already tells
  bool store_silent = false;  // the store did not answer within kLookBack
};

// What a backend finds out about its failed operation, from the exception and by asking its
// store: whether the ranks called different collectives (`verdict`), else the clues.
struct Findings {
  std::string verdict;
  FailureClues clues;
};

// A sentence about the ranks in `clues` (their state, who hosts them), or "".
using Diagnose = std::function<std::string(const FailureClues& clues)>;

}  // namespace accel
