// SPDX-License-Identifier: Apache-2.0
// What the members of a shared-memory segment (shm_segment.h) tell each other through the
// group's store while they set it up, typed, with one codec, in the pattern of the store's
// protocol (runtime/store/tcp_store_protocol.h) and checkpoint_messages.h: one struct per
// message, a protocol version, "t" naming the kind; decode() refuses a missing, mistyped or
// unknown field and another version, naming it.
//
//   offer:  the first member's segment (its pid, descriptor and nonce), or why it has none
//   answer: a member's "mapped it" or why not; the first member's decision for the group
#pragma once

#include <cstdint>
#include <string>

namespace accel::comm::shm {

inline constexpr int kShmProtocolVersion = 1;

struct SegmentOffer {
  bool created = false;
  int pid = 0;
  int fd = -1;
  uint64_t nonce = 0;
  std::string problem;  // when not created

  std::string encode() const;
  static SegmentOffer decode(const std::string& text);  // throws CommError naming the field
};

struct SegmentAnswer {
  bool ok = true;
  std::string problem;  // when not ok

  std::string encode() const;
  static SegmentAnswer decode(const std::string& text);  // throws CommError naming the field
};

}  // namespace accel::comm::shm
