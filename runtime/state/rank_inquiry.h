// SPDX-License-Identifier: Apache-2.0
// What became of the ranks a failed collective waited for, told from evidence only:
//   - the store's record of ranks whose connection closed (departed ranks);
//   - a store that does not answer: rank 0 hosts it, so rank 0's process is not running
//     (stopped) or its machine cannot be reached; a store that refuses: rank 0 has exited;
//   - the launcher's view (lib/launch/supervise/rank_questions.h, ACCEL_LAUNCHER_SOCKET): the process
//     state of a rank on this machine, or what another machine's launcher reports of its own.
// The store's questions give up within kLookBack (comm/failure_clues.h), and so do the
// launcher's, all of them together: a second and a half at most. Workers started without accel's launcher get what the
// store says. Thread-safe: each call opens connections of its own.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "runtime/comm/failure_clues.h"
#include "runtime/store/store.h"

namespace accel {

class RankInquiry {
 public:
  // `store`: the job's (it must outlive this); `launcher_socket`: "" when there is none.
  RankInquiry(Store& store, std::string launcher_socket);

  // `clues` in world ranks. "" when nothing is known.
  std::string explain(const FailureClues& clues) const;
  // The launcher's answer about `rank`, or "" (no launcher, or no answer by `deadline`, by
  // default kLookBack from now).
  std::string askLauncher(int rank) const;
  std::string askLauncher(int rank, std::chrono::steady_clock::time_point deadline) const;

 private:
  Store& store_;
  std::string launcher_socket_;
};

}  // namespace accel
