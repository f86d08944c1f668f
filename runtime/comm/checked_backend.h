// SPDX-License-Identifier: Apache-2.0
// ACCEL_DEBUG=DETAIL (and `accel launch --debug`, Accelerate's debug mode): before each
// collective runs, every rank's call (collective_call.h) is all-gathered over a separate CPU
// group and compared, so ranks that call different collectives fail before any byte moves, on
// any backend — NCCL included, which has no cheaper check — each with a message listing every
// rank's call. The counterpart of TORCH_DISTRIBUTED_DEBUG=DETAIL's wrapper and of Accelerate's
// verify_operation. It costs one small all_gather per collective and blocks the caller for it,
// so it is for finding a bug, not for training runs; without DETAIL, the transports' own checks
// (call_watch.h tells the whole story) find the same within seconds at no cost. Thread-safe as `inner`.
#pragma once

#include <memory>
#include <mutex>

#include "runtime/comm/backend.h"
#include "runtime/comm/collective_call.h"

namespace accel {

class CheckedBackend : public Backend {
 public:
  // `checker`: the same ranks, CPU memory (any CPU backend of its own).
  CheckedBackend(std::unique_ptr<Backend> inner, std::unique_ptr<Backend> checker);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const char* name() const override { return inner_->name(); }

  Memory memory() const override { return inner_->memory(); }
  void abandon() override { inner_->abandon(); }

 protected:
  // Every call, those with nothing to exchange included, is compared first; the steps then go
  // to `inner`'s own front door, in the order they were checked.
  WorkPtr enter(const CollectiveCall& call, bool exchanges, FunctionRef<WorkPtr()> local,
                FunctionRef<WorkPtr()> start) override;
  WorkPtr startAllReduce(const CollectiveCall& call, Tensor data) override;
  WorkPtr startBroadcast(const CollectiveCall& call, Tensor data) override;
  WorkPtr startAllGather(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                          const std::vector<size_t>& counts) override;
  WorkPtr startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startGather(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startScatter(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startAllToAll(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                         const std::vector<size_t>& recv_counts) override;
  WorkPtr startBarrier(const CollectiveCall& call) override;

 private:
  // Throws CommError listing every rank's call when they differ.
  void check(CollectiveCall call);

  std::unique_ptr<Backend> inner_, checker_;
  std::mutex mutex_;  // numbers and checks calls one at a time, in the order they are made
  uint64_t seq_ = 0;
};

}  // namespace accel
