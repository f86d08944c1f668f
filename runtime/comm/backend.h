// SPDX-License-Identifier: Apache-2.0
// A communication backend for one group of ranks: asynchronous collectives returning Work.
// Every rank of the group must issue the same collectives in the same order. Buffers must stay
// alive until the Work completes. Methods may be called from any thread (calls are serialised).
//
// The public collective methods are every transport's one front door (backend.cc): they check
// the arguments against the contract written beside each (the memory the transport works on,
// buffer sizes, the root), describe the call (collective_call.h), finish at once a call with
// nothing to exchange (a group of one, no elements), and only then call the transport's own
// step, the protected start*() method: a transport gets every check by construction, and its
// steps may assume them. How to add a collective: runtime/README.md.
#pragma once

#include <vector>

#include "lib/common/function_ref.h"
#include "runtime/comm/collective_call.h"
#include "runtime/comm/types.h"
#include "runtime/comm/work.h"

namespace accel {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* name() const = 0;

  // The memory this backend's collectives read and write; a tensor elsewhere is refused, naming
  // `what` ("Gloo collectives") and `hint`.
  struct Memory {
    DeviceType device;
    const char* what;
    const char* hint;
  };
  virtual Memory memory() const = 0;

  // In place on every rank.
  WorkPtr allReduce(Tensor data, ReduceOp op);
  // `data` of `root` to everyone, in place.
  WorkPtr broadcast(Tensor data, int root);
  // `output` holds size() * input.count elements, rank r's input at offset r * input.count.
  WorkPtr allGather(Tensor input, Tensor output);
  // Unequal sizes: rank r contributes counts[r] elements, laid out one after another in `output`.
  WorkPtr allGatherV(Tensor input, Tensor output, std::vector<size_t> counts);
  // `input` holds size() * output.count elements; rank r gets the reduction of chunk r.
  WorkPtr reduceScatter(Tensor input, Tensor output, ReduceOp op);
  // `output` (root only) holds size() * input.count elements.
  WorkPtr gather(Tensor input, Tensor output, int root);
  // `input` (root only) holds size() * output.count elements; rank r gets chunk r.
  WorkPtr scatter(Tensor input, Tensor output, int root);
  // `input` and `output` hold size() equal chunks: chunk q of rank r's input becomes chunk r of
  // rank q's output (expert and sequence parallelism's exchange).
  WorkPtr allToAll(Tensor input, Tensor output);
  // Unequal chunks: rank r sends send_counts[q] elements to rank q, its input's chunks one after
  // another in rank order, and receives recv_counts[q] from rank q likewise; rank r's
  // send_counts[q] must equal rank q's recv_counts[r].
  WorkPtr allToAllV(Tensor input, Tensor output, std::vector<size_t> send_counts, std::vector<size_t> recv_counts);
  WorkPtr barrier();

  // This rank will not finish the operation it is in (a part of it that went through another
  // backend failed): peers waiting on it here must fail now, naming it, not at their timeout.
  // Every transport decides how: one whose peers learn from a closed connection closes it.
  virtual void abandon() = 0;

 protected:
  // Every call the front door let in passes here, those with nothing to exchange included:
  // `local` finishes a call that exchanges nothing, `start` runs the transport's step. The
  // checked wrapper (checked_backend.h) compares the ranks' calls here first.
  virtual WorkPtr enter(const CollectiveCall& call, bool exchanges, FunctionRef<WorkPtr()> local,
                        FunctionRef<WorkPtr()> start);

  // The transports' steps: arguments checked, size() > 1 and something to exchange. `call`
  // carries the op and root; the Work's description is call.describe().
  virtual WorkPtr startAllReduce(const CollectiveCall& call, Tensor data) = 0;
  virtual WorkPtr startBroadcast(const CollectiveCall& call, Tensor data) = 0;
  virtual WorkPtr startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                                  const std::vector<size_t>& counts) = 0;
  // All counts input.count; by default all_gather_v's step.
  virtual WorkPtr startAllGather(const CollectiveCall& call, Tensor in, Tensor out);
  virtual WorkPtr startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) = 0;
  virtual WorkPtr startGather(const CollectiveCall& call, Tensor in, Tensor out) = 0;
  virtual WorkPtr startScatter(const CollectiveCall& call, Tensor in, Tensor out) = 0;
  virtual WorkPtr startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out,
                                 const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts) = 0;
  // Equal chunks; by default all_to_all_v's step.
  virtual WorkPtr startAllToAll(const CollectiveCall& call, Tensor in, Tensor out);
  virtual WorkPtr startBarrier(const CollectiveCall& call) = 0;

 private:
  template <typename Start>
  WorkPtr admit(const CollectiveCall& call, const Tensor& from, const Tensor& to, size_t bytes, Start start);
  void requireMemory(const Tensor& t, const char* op) const;
  void requireRoot(const char* op, int root) const;
};

}  // namespace accel
