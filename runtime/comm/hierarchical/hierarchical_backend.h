// SPDX-License-Identifier: Apache-2.0
// Collectives of a group spread over several machines with several ranks on some of them: each
// host's ranks meet over shared memory (or whatever `local` is), one leader per host (its lowest
// rank) meets the other leaders over Gloo. An all_reduce reduces inside each host, then among
// the leaders, then each leader broadcasts inside its host: the slow network carries each
// host's data once instead of once per rank, and every rank receives the leaders' bits, so all
// ranks agree exactly. The other collectives are made of the same three kinds of step (their
// data crosses the network once per host too). Operations run in order on their own queue.
// Calls that differ are found by the parts: inside a host at the first shared-memory step,
// between hosts by the leaders' Gloo watch; a leader whose part failed abandons its host's step.
#pragma once

#include <memory>

#include "runtime/comm/backend.h"
#include "runtime/comm/call_watch.h"
#include "runtime/comm/host_identity.h"
#include "runtime/comm/op_queue.h"

namespace accel::comm::hierarchical {

class HierarchicalBackend : public Backend {
 public:
  // `local`: this host's ranks, in the layout's order; `leaders`: the hosts' leaders in host
  // order, on leaders only (null elsewhere). `leaders_watch`: the leaders' CallWatch, which
  // every rank reads for its message: whether the leaders found that hosts called different
  // collectives. The parts' own errors say what they found of the ranks they waited for.
  HierarchicalBackend(int rank, HostLayout layout, std::unique_ptr<Backend> local, std::unique_ptr<Backend> leaders,
                      std::shared_ptr<CallWatch> leaders_watch);
  ~HierarchicalBackend() override;

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(layout_.host_of.size()); }
  const char* name() const override { return "shm+gloo"; }

  Memory memory() const override;
  // The host's step fails for its other ranks at once (its transport's abandon).
  void abandon() override { local_->abandon(); }

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
  WorkPtr startBarrier(const CollectiveCall& call) override;

 private:
  WorkPtr submit(const CollectiveCall& call, std::function<void()> run);
  void runAllReduce(Tensor t, ReduceOp op);
  void runBroadcast(Tensor t, int root);
  void runAllGatherV(Tensor in, Tensor out, const std::vector<size_t>& counts);
  void runAllToAllV(Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                    const std::vector<size_t>& recv_counts);
  std::vector<uint8_t> exchangeBetweenHosts(const std::vector<uint8_t>& gathered, DataType t,
                                            const std::vector<int64_t>& lists, std::vector<size_t>& lengths);
  int host() const { return layout_.host_of[static_cast<size_t>(rank_)]; }

  int rank_;
  HostLayout layout_;
  std::unique_ptr<Backend> local_, leaders_;
  std::unique_ptr<OpQueue> queue_;  // last: drained first
};

}  // namespace accel::comm::hierarchical
