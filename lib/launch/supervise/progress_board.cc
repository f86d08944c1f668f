// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/progress_board.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "lib/launch/launch_env.h"

namespace accel::launch::supervise {

ProgressBoard::~ProgressBoard() {
  if (map_) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
}

std::string ProgressBoard::open(const plan::LaunchPlan& plan) {
  if (plan.hang_timeout <= 0 && plan.max_restarts <= 0) return "";
  size_t slots = 0;
  for (const auto& w : plan.workers) {
    if (w.label.empty()) slots = std::max(slots, static_cast<size_t>(w.local_rank) + 1);
  }
  if (slots == 0) return "";  // mpirun runs the ranks: their output alone counts
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_ = (slots * launch_env::kProgressSlotBytes + page - 1) / page * page;
  fd_ = ::memfd_create("accel-progress", MFD_CLOEXEC);
  void* map = MAP_FAILED;
  if (fd_ >= 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) == 0) {
    map = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  }
  if (map == MAP_FAILED) {
    const std::string why = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return fmt::format(
        "warning: no progress board ({}): only the workers' output counts as progress, and no saved "
        "checkpoint is seen (--max_no_progress_restarts)",
        why);
  }
  map_ = static_cast<unsigned char*>(map);
  seen_.assign(slots, 0);
  return "";
}

std::atomic<uint64_t>* ProgressBoard::slot(size_t local_rank) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(map_ + local_rank * launch_env::kProgressSlotBytes);
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
