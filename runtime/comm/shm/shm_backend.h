// SPDX-License-Identifier: Apache-2.0
// Collectives among the members of a group that share a machine, through one shared-memory
// segment (shm_segment.h) and a step barrier (shm_steps.h), behind the Backend interface and
// buffer-size contract of Gloo and NCCL.
//
// How the data moves: a buffer goes through in chunks of slotBytes() per member. Every member
// copies its chunk into its slot, all meet at a step, then each member reduces its own slice
// of the chunk across every slot, always in member order 0, 1, 2…, so each element is computed
// once and every rank receives the same bits; the next step publishes the slices and each
// member copies the result out. Each area has two parities: an area written before step s is
// read only between steps s and s+1, while the other parity fills, so copies and reductions of
// consecutive chunks overlap with one step per chunk, and chunks stay small enough to live in
// the cache between writer and reader. Operations run in order on the group's queue (small
// ones on the caller's thread, op_queue.h). After a failure the group is broken. Members that
// make different calls fail at that operation's first step, each naming every member's call.
#pragma once

#include <algorithm>
#include <memory>

#include "lib/common/defaults.h"
#include "runtime/comm/backend.h"
#include "runtime/comm/call_watch.h"
#include "runtime/comm/op_queue.h"
#include "runtime/comm/shm/shm_segment.h"
#include "runtime/comm/shm/shm_steps.h"

namespace accel::comm::shm {

struct ShmOptions {
  std::chrono::milliseconds timeout = defaults::kGlooTimeout;  // per wait for a peer
  size_t slot_bytes = 1 << 20;
  // The chunk for `members` ranks: large enough that steps are few, small enough that a chunk
  // stays in the cache between its writer and its reader (scripts/bench_allreduce measures the
  // choice; docs/BENCHMARKS.md has its figures). More members: smaller chunks, so that the segment,
  // (2 * members + 2) chunks, stays within about 20 MiB.
  static size_t slotBytesFor(int members) {
    return std::clamp<size_t>((8u << 20) / static_cast<size_t>(std::max(members, 1)), 256u << 10, 1u << 20);
  }
  std::vector<int> names;  // each member's rank as messages call it (default: its member index)
  std::string part;        // a step of a larger group (op_queue.h: groupFailureText), or ""
  Diagnose diagnose;       // after a failure: what else is known of the ranks that did not arrive
};

class ShmBackend : public Backend {
 public:
  // Collective over the `size` members meeting in `store`. Null, with `why_not`, when the
  // segment cannot be shared (every member gets the same answer).
  static std::unique_ptr<ShmBackend> create(Store& store, int rank, int size, ShmOptions options, std::string& why_not);
  ~ShmBackend() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "shm"; }

  Memory memory() const override;
  void abandon() override;

 protected:
  WorkPtr startAllReduce(const CollectiveCall& call, Tensor data) override;
  WorkPtr startBroadcast(const CollectiveCall& call, Tensor data) override;
  WorkPtr startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                          const std::vector<size_t>& counts) override;
  WorkPtr startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startGather(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startScatter(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                         const std::vector<size_t>& recv_counts) override;
  WorkPtr startAllToAll(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startBarrier(const CollectiveCall& call) override;

 private:
  ShmBackend(std::unique_ptr<ShmSegment> segment, std::unique_ptr<CallWatch> watch, int rank, int size,
             ShmOptions options);
  template <typename Run> WorkPtr submit(const CollectiveCall& call, size_t bytes, Run run);  // shm_backend.cc only
  void runAllReduce(Tensor t, ReduceOp op);
  void runBroadcast(Tensor t, int root);
  // all_gather_v; with root >= 0 only the root copies the result out (gather).
  void runAllGatherV(Tensor in, Tensor out, const std::vector<size_t>& counts, int root);
  void runReduceScatter(Tensor in, Tensor out, ReduceOp op);
  void runScatter(Tensor in, Tensor out, int root);
  // `longest`: the most elements any member sends any other (unknown: 0, found in a first step).
  void runAllToAllV(Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                    const std::vector<size_t>& recv_counts, size_t longest);
  size_t agreeOnCounts(const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts);

  int rank_, size_;
  ShmOptions options_;
  std::unique_ptr<ShmSegment> seg_;
  std::unique_ptr<CallWatch> watch_;
  ShmSteps steps_;
  std::unique_ptr<OpQueue> queue_;  // last: drained first
};

}  // namespace accel::comm::shm
