// SPDX-License-Identifier: Apache-2.0
// The shared memory of one group's members on one machine. The first member creates an
// anonymous memfd: it never has a name in /dev/shm, so no crash can leave one behind. The
// others open it through /proc/PID/fd/FD, which the store tells them, and the first member
// closes it as soon as every member has mapped it: from then on the mappings are all that keep
// it, and the kernel frees it with the last of them. Every member gets the same answer from
// open(): the segment, or null and the reason (a member that could not map it), so a group
// falls back to another transport as one.
//
// Layout: a header, one cache line per member (its step counter, which the others sleep on as
// a futex, its pid, whether it gave up, and its calls' fingerprints), then the data: for each of two parities a slot of
// slotBytes() per member, then a result area of slotBytes() per parity (shm_backend.cc says who writes what).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/store/store.h"

namespace accel::comm::shm {

struct alignas(64) ShmMember {
  std::atomic<uint32_t> step{0};      // the last step this member reached (a futex word)
  std::atomic<uint32_t> sleepers{0};  // members asleep on `step`: wake them after advancing it
  std::atomic<int32_t> pid{0};
  std::atomic<uint32_t> abandoned{0};  // 1: it will not reach its next step (its operation failed)
  std::atomic<uint64_t> call[2] = {};  // the fingerprint of its call, by the parity of that call's first step
};

class ShmSegment {
 public:
  // Collective over the `members` ranks meeting in `store` (a namespace of their own).
  static std::unique_ptr<ShmSegment> open(Store& store, int member, int members, size_t slot_bytes,
                                          std::string& why_not);
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  int members() const { return members_; }
  size_t slotBytes() const { return slot_bytes_; }
  ShmMember& member(int m) const;
  // Every member's slot of one parity, one after another: members() * slotBytes().
  uint8_t* slots(int parity);
  uint8_t* slot(int m, int parity) { return slots(parity) + static_cast<size_t>(m) * slot_bytes_; }
  uint8_t* result(int parity);

  // Whether member m's process has exited (a pidfd, taken when the segment was opened, turns
  // readable then, even while the process is a zombie). Always false for this process.
  bool exited(int m) const;
  int pid(int m) const { return member(m).pid.load(); }

 private:
  ShmSegment(int members, size_t slot_bytes);
  std::string create(Store& store);
  std::string attach(Store& store, int member);
  void map(int fd);
  void watchPeers();

  int members_;
  size_t slot_bytes_;
  size_t total_bytes_;
  size_t data_offset_;
  uint8_t* base_ = nullptr;
  std::unique_ptr<int[]> pidfds_;  // -1: this process, or no pidfd (then kill(pid, 0))
};

}  // namespace accel::comm::shm
