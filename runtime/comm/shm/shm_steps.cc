// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/shm/shm_steps.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/process/process_state.h"
#include "lib/common/running_deadline.h"
#include "runtime/comm/work.h"

namespace accel::comm::shm {

namespace {

using Clock = std::chrono::steady_clock;

// How long a member spins before it sleeps: longer than two members arriving together need
// (a chunk's copies apart), short enough that a rank waiting for a busy peer yields its core.
constexpr auto kSpin = std::chrono::microseconds(50);
// How often a sleeping member wakes to check that the one it waits for is still alive.
constexpr auto kWatch = std::chrono::milliseconds(10);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Process-shared futex: the word lives in a MAP_SHARED segment, so not FUTEX_PRIVATE_FLAG.
void futexWait(std::atomic<uint32_t>& word, uint32_t seen, std::chrono::nanoseconds limit) {
  timespec ts{static_cast<time_t>(limit.count() / 1000000000), static_cast<long>(limit.count() % 1000000000)};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace

ShmSteps::ShmSteps(ShmSegment& segment, int member, std::vector<int> names, std::chrono::milliseconds timeout)
    : seg_(segment), me_(member), names_(std::move(names)), timeout_(timeout) {}

// Counters wrap after 2^32 steps; comparing the difference as signed keeps the order.
bool ShmSteps::reached(int m, uint32_t step) const {
  return static_cast<int32_t>(seg_.member(m).step.load(std::memory_order_acquire) - step) >= 0;
}

void ShmSteps::expect(const CollectiveCall& call) {
  expected_ = call.fingerprint();
  checking_ = true;
}

void ShmSteps::sync() {
  const uint32_t step = ++step_;
  ShmMember& mine = seg_.member(me_);
  // The call goes out with the step: published by its store (a release), read after the others'
  // step (an acquire). Stored right before it, not when the operation began: the others poll
  // this line while they wait, and a store that early would make this member fetch it back
  // twice. A member can be one step ahead, writing the other parity, never this one until this
  // member moves on.
  if (checking_) mine.call[step & 1u].store(expected_, std::memory_order_relaxed);
  // Sequentially consistent with the sleepers' count: either a sleeper registered before this
  // store, and is woken, or it reads the new step before it sleeps (futexWait also rechecks).
  mine.step.store(step, std::memory_order_seq_cst);
  if (mine.sleepers.load(std::memory_order_seq_cst) != 0) futexWakeAll(mine.step);
  // Each member's call is read right after its step, from the cache line that read just
  // fetched: read later, the line may already be back with its owner, writing its next call.
  bool differ = false;
  for (int m = 0; m < seg_.members(); ++m) {
    if (m == me_) continue;
    if (!reached(m, step)) waitFor(m, step);
    if (checking_) differ |= seg_.member(m).call[step & 1u].load(std::memory_order_relaxed) != expected_;
  }
  checking_ = false;
  if (differ) throw ShmCallsDiffer{step};
}

void ShmSteps::abandon() {
  ShmMember& mine = seg_.member(me_);
  mine.abandoned.store(1, std::memory_order_seq_cst);
  futexWakeAll(mine.step);  // sleepers recheck, and see it
}

void ShmSteps::waitFor(int m, uint32_t step) {
  const auto start = Clock::now();
  for (unsigned spins = 1;; ++spins) {
    relax();
    if (reached(m, step)) return;
    if (spins % 64 == 0 && (Clock::now() - start > kSpin || seg_.member(m).abandoned.load(std::memory_order_relaxed)))
      break;
  }
  ShmMember& peer = seg_.member(m);
  RunningDeadline deadline(timeout_, kWatch, start);  // a job stopped with Ctrl-Z is not late
  while (true) {
    peer.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = peer.step.load(std::memory_order_seq_cst);
    if (static_cast<int32_t>(seen - step) < 0) futexWait(peer.step, seen, deadline.sleep());
    peer.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(m, step)) return;
    if (peer.abandoned.load()) fail(m, step, "gave up on its operation (its own part of it failed: see its error)");
    if (seg_.exited(m)) fail(m, step, "exited");
    if (deadline.passed()) {
      // Its pidfd says whether it is still there; /proc, whether it can make progress.
      const std::string state =
          seg_.exited(m) ? "it has exited" : "it is " + process::processState(seg_.pid(m)).describe();
      fail(m, step, fmt::format("did not arrive within {:g} s: {}", defaults::seconds(timeout_), state));
    }
  }
}

void ShmSteps::fail(int m, uint32_t step, const std::string& why) {
  const uint32_t at = seg_.member(m).step.load();
  const int name = names_[static_cast<size_t>(m)];
  last_missing_ = name;
  throw CommError(fmt::format("rank {} (pid {}, on this machine) {} while rank {} waited for it over shared memory "
                              "(it is at step {} of this group, this rank at step {}{})",
                              name, seg_.pid(m), why, names_[static_cast<size_t>(me_)], at, step,
                              at + 1 < step ? ": it issued fewer collectives, or is stuck" : ""),
                  "a rank that exits or stops calling collectives leaves its peers waiting; see its own output");
}

}  // namespace accel::comm::shm
