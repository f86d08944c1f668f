// SPDX-License-Identifier: Apache-2.0
// Collectives on CPU memory through Gloo (TCP). Operations run in submission order on one
// worker thread per group (op_queue.h), so all ranks issue Gloo calls in the same order and the
// caller never blocks until it waits. After a failure the group is broken: later operations fail
// at once with the first error. Ranks that call different collectives (call_watch.h) fail within
// about two seconds, every one with a message listing what each called. The collective timeout
// is the queue's watch's to enforce, counting only the time this process ran (op_queue.h), so a
// job stopped with Ctrl-Z for longer resumes unharmed; Gloo's own wait limit is the timeout plus
// kStopAllowance, a backstop. Thread-safe. In this folder's namespace, accel::comm::gloo, the Gloo
// library itself is ::gloo.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "lib/common/defaults.h"
#include "runtime/comm/backend.h"
#include "runtime/comm/call_watch.h"
#include "runtime/comm/op_queue.h"
#include "runtime/store/store.h"

namespace gloo::rendezvous {
class Context;
}

namespace accel::comm::gloo {

struct GlooOptions {
  std::string hostname = "127.0.0.1";                          // the address other ranks reach this one at
  std::string iface;                                           // or a network interface (GLOO_SOCKET_IFNAME)
  std::chrono::milliseconds timeout = defaults::kGlooTimeout;  // per collective
  // After a failure: what else is known of the ranks that did not arrive (failure_clues.h).
  Diagnose diagnose;
  std::vector<int> names;  // how messages call each member (default: its rank in this group)
  std::string part;        // a step of a larger group (op_queue.h: groupFailureText), or ""
};

class GlooBackend : public Backend {
 public:
  // Connects a full mesh of `size` ranks through `store` (which must outlive the call). Blocks
  // until every rank has joined or the store times out.
  GlooBackend(Store& store, int rank, int size, GlooOptions options);
  ~GlooBackend() override;  // finishes queued operations

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "gloo"; }

  Memory memory() const override;
  void abandon() override;

 protected:
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
  WorkPtr enqueue(const CollectiveCall& call, std::function<void(uint32_t tag)> run);
  void abortRunning();  // from the watch thread: ranks' calls differ

  // How long Gloo itself may wait beyond the collective timeout: a stop with Ctrl-Z longer than
  // this still fails the collective it interrupted.
  static constexpr std::chrono::milliseconds kStopAllowance = std::chrono::hours(24);

  int rank_, size_;
  GlooOptions options_;
  std::chrono::milliseconds wait_limit_ = options_.timeout + kStopAllowance;
  std::atomic<uint64_t> timed_out_{0};  // the call the watch ended at its timeout
  std::shared_ptr<::gloo::rendezvous::Context> context_;
  std::vector<int> sockets_;  // duplicates of Gloo's connected sockets (gloo_backend.cc: glooSockets)
  std::unique_ptr<CallWatch> watch_;
  std::unique_ptr<OpQueue> queue_;  // last: destroyed (drained) first
};

}  // namespace accel::comm::gloo

// Public API, in the front door's namespace: state/ and the tests name them so.
namespace accel {
using comm::gloo::GlooBackend;
using comm::gloo::GlooOptions;
}  // namespace accel
