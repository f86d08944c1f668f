// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/progress_board.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "lib/launch/launch_env.h"

namespace accel::launch::supervise {

std::string ProgressBoard::open(const plan::LaunchPlan& plan) {
  if (plan.hang_timeout <= 0 && plan.max_restarts <= 0) return "";
  size_t slots = 0;
  for (const auto& w : plan.workers) {
    if (w.label.empty()) slots = std::max(slots, static_cast<size_t>(w.local_rank) + 1);
  }
  if (slots == 0) return "";  // mpirun runs the ranks: their output alone counts
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::string why =
      memory_.open("accel-progress", (slots * launch_env::kProgressSlotBytes + page - 1) / page * page);
  if (!why.empty()) {
    return fmt::format(
        "warning: no progress board ({}): only the workers' output counts as progress, and no saved "
        "checkpoint is seen (--max_no_progress_restarts)",
        why);
  }
  seen_.assign(slots, 0);
  return "";
}

std::atomic<uint64_t>* ProgressBoard::slot(size_t local_rank) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(memory_.data() + local_rank * launch_env::kProgressSlotBytes);
}

bool ProgressBoard::advanced() {
  bool moved = false;
  for (size_t r = 0; r < seen_.size(); ++r) {
    const uint64_t now = slot(r)->load(std::memory_order_relaxed);
    moved = moved || now != seen_[r];
    seen_[r] = now;
  }
  return moved;
}

long long ProgressBoard::savedStep() const {
  long long best = -1;
  for (size_t r = 0; r < seen_.size(); ++r) {
    const uint64_t saved = slot(r)[1].load(std::memory_order_relaxed);
    if (saved > 0) best = std::max(best, static_cast<long long>(saved - 1));
  }
  return best;
}

}  // namespace accel::launch::supervise
