// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/checked_backend.h"

#include <fmt/format.h>

#include "runtime/comm/work.h"

namespace accel {

CheckedBackend::CheckedBackend(std::unique_ptr<Backend> inner, std::unique_ptr<Backend> checker)
    : inner_(std::move(inner)), checker_(std::move(checker)) {}

void CheckedBackend::check(CollectiveCall call) {
  call.seq = ++seq_;
  auto mine = call.words();
  const size_t world = static_cast<size_t>(size()), n = CollectiveCall::kWords;
  std::vector<int64_t> all(world * n);
  checker_->allGather(cpuTensor(mine.data(), n), cpuTensor(all.data(), all.size()))->wait();
  bool same = true;
  std::vector<std::optional<CollectiveCall>> calls;
  for (size_t r = 0; r < world; ++r) {
    calls.push_back(CollectiveCall::fromWords(&all[r * n]));
    same = same && calls.back() && calls.back()->fingerprint() == call.fingerprint();
  }
  if (!same) {
    throw CommError(fmt::format("{} refused on rank {} of {}: {}; checked before it ran (ACCEL_DEBUG=DETAIL)",
                                call.describe(), rank(), size(), mismatchText(calls)));
  }
}

WorkPtr CheckedBackend::allReduce(Tensor t, ReduceOp op) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall::reduction(CallKind::AllReduce, t, op));
  return inner_->allReduce(t, op);
}

WorkPtr CheckedBackend::broadcast(Tensor t, int root) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall::rooted(CallKind::Broadcast, t, root));
  return inner_->broadcast(t, root);
}

WorkPtr CheckedBackend::allGather(Tensor in, Tensor out) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall::of(CallKind::AllGather, in.dtype, in.count));
  return inner_->allGather(in, out);
}

WorkPtr CheckedBackend::allGatherV(Tensor in, Tensor out, std::vector<size_t> counts) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t total = 0;
  for (size_t c : counts) total += c;
  check(CollectiveCall::of(CallKind::AllGatherV, in.dtype, total));
  return inner_->allGatherV(in, out, std::move(counts));
}

WorkPtr CheckedBackend::reduceScatter(Tensor in, Tensor out, ReduceOp op) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall::reduction(CallKind::ReduceScatter, out, op));
  return inner_->reduceScatter(in, out, op);
}

WorkPtr CheckedBackend::gather(Tensor in, Tensor out, int root) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall::rooted(CallKind::Gather, in, root));
  return inner_->gather(in, out, root);
}

WorkPtr CheckedBackend::scatter(Tensor in, Tensor out, int root) {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall::rooted(CallKind::Scatter, out, root));
  return inner_->scatter(in, out, root);
}

WorkPtr CheckedBackend::barrier() {
  std::lock_guard<std::mutex> lock(mutex_);
  check(CollectiveCall{});
  return inner_->barrier();
}

}  // namespace accel
