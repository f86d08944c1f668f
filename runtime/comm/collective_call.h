// SPDX-License-Identifier: Apache-2.0
// What one collective call is — its number in the group's sequence, operation, dtype, element
// count, reduce op and root — so that ranks can check they are making the same call before
// their bytes meet. Two ranks whose calls differ in any of these would otherwise wait on each
// other until the timeout or, worse, exchange bytes of different shapes. The fingerprint hashes
// every field, the number included: equal fingerprints mean the same call at the same place.
// Values; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/comm/types.h"

namespace accel {

// New kinds go before Barrier, which stays last: decoded values are range-checked against Last
// (collective_call_test checks that every value up to Last has a name, and the next none).
enum class CallKind : uint8_t {
  AllReduce,
  Broadcast,
  AllGather,
  AllGatherV,
  ReduceScatter,
  Gather,
  Scatter,
  AllToAll,
  AllToAllV,
  Barrier,
  Last = Barrier
};

// "all_reduce", "all_to_all_v", …; "?" for a value that is no kind.
const char* callKindName(CallKind k);

struct CollectiveCall {
  uint64_t seq = 0;  // 1, 2, … in the order the group's operations were issued (OpQueue numbers them)
  // The number messages give it when that is another: a step of a larger group's operation
  // (hierarchical_backend.h) is shown with that operation's number, which the user's code made.
  uint64_t shown = 0;
  CallKind kind = CallKind::Barrier;
  DataType dtype = DataType::U8;
  ReduceOp op = ReduceOp::Sum;  // reductions only
  int root = -1;                // broadcast, gather, scatter
  // The elements every rank must agree on: all_gather_v's total, all_to_all's whole buffer,
  // none for all_to_all_v (its ranks' counts differ by design).
  uint64_t count = 0;

  static CollectiveCall reduction(CallKind kind, const Tensor& t, ReduceOp op);
  static CollectiveCall rooted(CallKind kind, const Tensor& t, int root);
  static CollectiveCall of(CallKind kind, DataType dtype, uint64_t count);

  // Whether a group of `size` ranks has something to exchange for it: not in a group of one,
  // nor when there are no elements (a barrier and all_to_all_v always meet).
  bool exchanges(int size) const;
  uint64_t fingerprint() const;
  // "all_reduce (f32 x 1000) sum", "broadcast (i64 x 1) from rank 0", "barrier": the Work's name.
  std::string describe() const;
  // "#12 all_reduce (f32 x 1000) sum": the same with its place in the sequence.
  std::string numbered() const;
  // The fields as integers (seq, kind, dtype, op, root, count, shown), for an all_gather, and
  // back (nullopt when a value is out of range).
  static constexpr size_t kWords = 7;
  std::array<int64_t, kWords> words() const;
  static std::optional<CollectiveCall> fromWords(const int64_t* words);
  // The same words as a line of text, for the store, and back (nullopt for anything else).
  std::string encode() const;
  static std::optional<CollectiveCall> decode(const std::string& text);
};

// While one lives on a thread, the calls numbered there (OpQueue::submit) are steps of the
// larger group's operation `outer`, and messages show that number (CollectiveCall::shown).
class StepsOf {
 public:
  explicit StepsOf(uint64_t outer);
  ~StepsOf();
  StepsOf(const StepsOf&) = delete;
  StepsOf& operator=(const StepsOf&) = delete;
  static uint64_t current();  // 0 outside any

 private:
  uint64_t previous_;
};

// The error text when ranks' calls differ: every rank's call (nullopt: unknown, it was not seen
// at that place of the sequence: still busy before it, or it never published its call), the
// ranks named by `names` (group ranks by default).
std::string mismatchText(const std::vector<std::optional<CollectiveCall>>& calls, const std::vector<int>& names = {});

}  // namespace accel
