// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/checked_backend.h"

#include <fmt/format.h>

#include "runtime/comm/call_watch.h"
#include "runtime/comm/work.h"

namespace accel {

CheckedBackend::CheckedBackend(std::unique_ptr<Backend> inner, std::unique_ptr<Backend> checker)
    : inner_(std::move(inner)), checker_(std::move(checker)) {}

void CheckedBackend::check(CollectiveCall call) {
  call.seq = ++seq_;
  const std::string differ = CallWatch::compareBeforeRunning(*checker_, call);
  if (!differ.empty()) {
    throw CommError(fmt::format("{} refused on rank {} of {}: {}; checked before it ran (ACCEL_DEBUG=DETAIL)",
                                call.describe(), rank(), size(), differ));
  }
}

WorkPtr CheckedBackend::enter(const CollectiveCall& call, bool exchanges, FunctionRef<WorkPtr()> local,
                              FunctionRef<WorkPtr()> start) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(call);
  return Backend::enter(call, exchanges, local, start);
}

WorkPtr CheckedBackend::startAllReduce(const CollectiveCall& call, Tensor t) { return inner_->allReduce(t, call.op); }

WorkPtr CheckedBackend::startBroadcast(const CollectiveCall& call, Tensor t) { return inner_->broadcast(t, call.root); }

WorkPtr CheckedBackend::startAllGather(const CollectiveCall&, Tensor in, Tensor out) {
  return inner_->allGather(in, out);
}

WorkPtr CheckedBackend::startAllGatherV(const CollectiveCall&, Tensor in, Tensor out,
                                        const std::vector<size_t>& counts) {
  return inner_->allGatherV(in, out, counts);
}

WorkPtr CheckedBackend::startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return inner_->reduceScatter(in, out, call.op);
}

WorkPtr CheckedBackend::startGather(const CollectiveCall& call, Tensor in, Tensor out) {
  return inner_->gather(in, out, call.root);
}

WorkPtr CheckedBackend::startScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return inner_->scatter(in, out, call.root);
}

WorkPtr CheckedBackend::startAllToAll(const CollectiveCall&, Tensor in, Tensor out) {
  return inner_->allToAll(in, out);
}

WorkPtr CheckedBackend::startAllToAllV(const CollectiveCall&, Tensor in, Tensor out,
                                       const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts) {
  return inner_->allToAllV(in, out, send_counts, recv_counts);
}

WorkPtr CheckedBackend::startBarrier(const CollectiveCall&) { return inner_->barrier(); }

}  // namespace accel
