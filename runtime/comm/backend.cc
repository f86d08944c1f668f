// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/backend.h"

#include <cstring>

#include <fmt/format.h>

#include "runtime/comm/collective_shapes.h"

namespace accel {

namespace {

// A call that exchanges nothing: `bytes` of `from` copied to `to` unless they are the same memory.
WorkPtr copiedLocally(const CollectiveCall& call, const Tensor& from, const Tensor& to, size_t bytes) {
  if (bytes && from.data != to.data) std::memcpy(to.data, from.data, bytes);
  return completedWork(call.describe());
}

}  // namespace

void Backend::requireMemory(const Tensor& t, const char* op) const {
  const Memory m = memory();
  if (t.device == m.device) return;
  throw CommError(
      fmt::format("{}: the tensor is in {} memory; {} work on {} memory", op,
                  t.device == DeviceType::CUDA ? "CUDA" : "CPU", m.what, m.device == DeviceType::CUDA ? "CUDA" : "CPU"),
      m.hint);
}

void Backend::requireRoot(const char* op, int root) const {
  if (root < 0 || root >= size())
    throw CommError(fmt::format("{}: root {} is not a rank of this group of {}", op, root, size()));
}

WorkPtr Backend::enter(const CollectiveCall& /*call*/, bool exchanges, FunctionRef<WorkPtr()> local,
                       FunctionRef<WorkPtr()> start) {
  return exchanges ? start() : local();
}

// A copy the front door cannot make itself (CUDA memory) goes to the transport's step.
template <typename Start>
WorkPtr Backend::admit(const CollectiveCall& call, const Tensor& from, const Tensor& to, size_t bytes, Start start) {
  const bool exchanges =
      call.exchanges(size()) || (bytes && from.data != to.data && memory().device != DeviceType::CPU);
  return enter(
      call, exchanges, [&] { return copiedLocally(call, from, to, bytes); }, start);
}

WorkPtr Backend::allReduce(Tensor t, ReduceOp op) {
  requireMemory(t, "all_reduce");
  const auto call = CollectiveCall::reduction(CallKind::AllReduce, t, op);
  return admit(call, t, t, 0, [&] { return startAllReduce(call, t); });
}

WorkPtr Backend::broadcast(Tensor t, int root) {
  requireMemory(t, "broadcast");
  requireRoot("broadcast", root);
  const auto call = CollectiveCall::rooted(CallKind::Broadcast, t, root);
  return admit(call, t, t, 0, [&] { return startBroadcast(call, t); });
}

WorkPtr Backend::allGather(Tensor in, Tensor out) {
  requireMemory(in, "all_gather");
  requireMemory(out, "all_gather");
  checkAllGather(in, out, size());
  const auto call = CollectiveCall::of(CallKind::AllGather, in.dtype, in.count);
  return admit(call, in, out, in.bytes(), [&] { return startAllGather(call, in, out); });
}

WorkPtr Backend::allGatherV(Tensor in, Tensor out, std::vector<size_t> counts) {
  requireMemory(in, "all_gather_v");
  requireMemory(out, "all_gather_v");
  const size_t total = checkAllGatherV(in, out, counts, size(), rank());
  const auto call = CollectiveCall::of(CallKind::AllGatherV, in.dtype, total);
  return admit(call, in, out, in.bytes(), [&] { return startAllGatherV(call, in, out, counts); });
}

WorkPtr Backend::reduceScatter(Tensor in, Tensor out, ReduceOp op) {
  requireMemory(in, "reduce_scatter");
  requireMemory(out, "reduce_scatter");
  checkReduceScatter(in, out, size());
  const auto call = CollectiveCall::reduction(CallKind::ReduceScatter, out, op);
  return admit(call, in, out, out.bytes(), [&] { return startReduceScatter(call, in, out); });
}

WorkPtr Backend::gather(Tensor in, Tensor out, int root) {
  requireMemory(in, "gather");
  requireRoot("gather", root);
  if (rank() == root) requireMemory(out, "gather");
  checkRooted("gather", out, in.count, size(), rank(), root);
  const auto call = CollectiveCall::rooted(CallKind::Gather, in, root);
  return admit(call, in, out, in.bytes(), [&] { return startGather(call, in, out); });
}

WorkPtr Backend::scatter(Tensor in, Tensor out, int root) {
  requireMemory(out, "scatter");
  requireRoot("scatter", root);
  if (rank() == root) requireMemory(in, "scatter");
  checkRooted("scatter", in, out.count, size(), rank(), root);
  const auto call = CollectiveCall::rooted(CallKind::Scatter, out, root);
  return admit(call, in, out, out.bytes(), [&] { return startScatter(call, in, out); });
}

WorkPtr Backend::allToAll(Tensor in, Tensor out) {
  requireMemory(in, "all_to_all");
  requireMemory(out, "all_to_all");
  checkAllToAll(in, out, size());
  const auto call = CollectiveCall::of(CallKind::AllToAll, in.dtype, in.count);
  return admit(call, in, out, in.bytes(), [&] { return startAllToAll(call, in, out); });
}

WorkPtr Backend::allToAllV(Tensor in, Tensor out, std::vector<size_t> send_counts, std::vector<size_t> recv_counts) {
  requireMemory(in, "all_to_all_v");
  requireMemory(out, "all_to_all_v");
  checkAllToAllV(in, out, send_counts, recv_counts, size(), rank());
  const auto call = CollectiveCall::of(CallKind::AllToAllV, in.dtype, 0);
  return admit(call, in, out, in.bytes(), [&] { return startAllToAllV(call, in, out, send_counts, recv_counts); });
}

WorkPtr Backend::barrier() {
  const CollectiveCall call;
  const Tensor none;
  return admit(call, none, none, 0, [&] { return startBarrier(call); });
}

WorkPtr Backend::startAllGather(const CollectiveCall& call, Tensor in, Tensor out) {
  return startAllGatherV(call, in, out, std::vector<size_t>(static_cast<size_t>(size()), in.count));
}

WorkPtr Backend::startAllToAll(const CollectiveCall& call, Tensor in, Tensor out) {
  const std::vector<size_t> chunks(static_cast<size_t>(size()), in.count / static_cast<size_t>(size()));
  return startAllToAllV(call, in, out, chunks, chunks);
}

}  // namespace accel
