// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/hierarchical_backend.h"

#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/reduce_ops.h"

namespace accel {

namespace {

constexpr const char* kWhat = "shared-memory and Gloo collectives";

uint8_t* bytesOf(const Tensor& t) { return static_cast<uint8_t*>(t.data); }

Tensor bufferView(std::vector<uint8_t>& buf, DataType t) { return {buf.data(), buf.size() / dtypeSize(t), t}; }

}  // namespace

HierarchicalBackend::HierarchicalBackend(int rank, HostLayout layout, std::unique_ptr<Backend> local,
                                         std::unique_ptr<Backend> leaders, std::function<std::string()> verdict)
    : rank_(rank), layout_(std::move(layout)), local_(std::move(local)), leaders_(std::move(leaders)) {
  queue_ = std::make_unique<OpQueue>(
      groupFailureText(rank_, size(), {},
                       [verdict = std::move(verdict)](const CollectiveCall&, const std::exception&,
                                                      std::chrono::steady_clock::duration) {
                         return Findings{verdict(), {}};
                       }));
}

HierarchicalBackend::~HierarchicalBackend() = default;

// A leader whose step between hosts failed gives up its host's step too, so the ranks of its
// host waiting there fail now rather than at their timeout.
WorkPtr HierarchicalBackend::submit(const CollectiveCall& call, std::function<void()> run) {
  return queue_->submit(call, [this, run = std::move(run)](const CollectiveCall& numbered) {
    const StepsOf steps(numbered.shown ? numbered.shown : numbered.seq);  // the parts' calls carry this number
    try {
      run();
    } catch (...) {
      local_->abandon();
      throw;
    }
  });
}

// Avg travels as a sum and is divided by the whole group's size at the end, on every rank alike.
void HierarchicalBackend::runAllReduce(Tensor t, ReduceOp op) {
  const ReduceOp step = op == ReduceOp::Avg ? ReduceOp::Sum : op;
  local_->allReduce(t, step)->wait();
  if (leaders_) leaders_->allReduce(t, step)->wait();
  local_->broadcast(t, 0)->wait();
  if (op == ReduceOp::Avg) finishAverage(t, size());
}

void HierarchicalBackend::runBroadcast(Tensor t, int root) {
  const int from = layout_.host_of[static_cast<size_t>(root)];
  if (host() == from) local_->broadcast(t, layout_.localIndex(root))->wait();
  if (leaders_) leaders_->broadcast(t, from)->wait();
  if (host() != from) local_->broadcast(t, 0)->wait();
}

// Each host gathers its ranks' data in one block, the leaders exchange the blocks, each leader
// hands them all to its host, and every rank puts each block's parts in rank order.
void HierarchicalBackend::runAllGatherV(Tensor in, Tensor out, const std::vector<size_t>& counts) {
  const size_t width = dtypeSize(in.dtype);
  std::vector<size_t> host_totals, mine;
  for (const auto& ranks : layout_.hosts) {
    size_t total = 0;
    for (int r : ranks) total += counts[static_cast<size_t>(r)];
    host_totals.push_back(total);
  }
  for (int r : layout_.hosts[static_cast<size_t>(host())]) mine.push_back(counts[static_cast<size_t>(r)]);
  const size_t everything = std::accumulate(host_totals.begin(), host_totals.end(), size_t{0});
  std::vector<uint8_t> block(host_totals[static_cast<size_t>(host())] * width), all(everything * width);
  local_->allGatherV(in, bufferView(block, in.dtype), mine)->wait();
  if (leaders_) leaders_->allGatherV(bufferView(block, in.dtype), bufferView(all, in.dtype), host_totals)->wait();
  if (everything) local_->broadcast(bufferView(all, in.dtype), 0)->wait();
  const std::vector<size_t> displ = offsetsOf(counts);
  size_t at = 0;
  for (const auto& ranks : layout_.hosts) {
    for (int r : ranks) {
      const size_t n = counts[static_cast<size_t>(r)] * width;
      std::memcpy(bytesOf(out) + displ[static_cast<size_t>(r)] * width, all.data() + at, n);
      at += n;
    }
  }
}

WorkPtr HierarchicalBackend::allReduce(Tensor t, ReduceOp op) {
  checkCpuMemory(t, "all_reduce", kWhat);
  const auto call = CollectiveCall::reduction(CallKind::AllReduce, t, op);
  if (t.count == 0) return completedWork(call.describe());
  return submit(call, [this, t, op] { runAllReduce(t, op); });
}

WorkPtr HierarchicalBackend::broadcast(Tensor t, int root) {
  checkCpuMemory(t, "broadcast", kWhat);
  if (root < 0 || root >= size())
    throw CommError(fmt::format("broadcast: root {} is not a rank of this group of {}", root, size()));
  const auto call = CollectiveCall::rooted(CallKind::Broadcast, t, root);
  if (t.count == 0) return completedWork(call.describe());
  return submit(call, [this, t, root] { runBroadcast(t, root); });
}

WorkPtr HierarchicalBackend::allGather(Tensor in, Tensor out) {
  checkAllGather(in, out, size());
  return allGatherV(in, out, std::vector<size_t>(static_cast<size_t>(size()), in.count));
}

WorkPtr HierarchicalBackend::allGatherV(Tensor in, Tensor out, std::vector<size_t> counts) {
  checkCpuMemory(in, "all_gather_v", kWhat);
  checkCpuMemory(out, "all_gather_v", kWhat);
  const size_t total = checkAllGatherV(in, out, counts, size(), rank_);
  const auto call = CollectiveCall::of(CallKind::AllGatherV, in.dtype, total);
  if (total == 0) return completedWork(call.describe());
  return submit(call, [this, in, out, counts] { runAllGatherV(in, out, counts); });
}

// As Gloo's: all-reduce a copy, keep this rank's chunk.
WorkPtr HierarchicalBackend::reduceScatter(Tensor in, Tensor out, ReduceOp op) {
  checkCpuMemory(in, "reduce_scatter", kWhat);
  checkCpuMemory(out, "reduce_scatter", kWhat);
  checkReduceScatter(in, out, size());
  const auto call = CollectiveCall::reduction(CallKind::ReduceScatter, out, op);
  if (out.count == 0) return completedWork(call.describe());
  return submit(call, [this, in, out, op] {
    std::vector<uint8_t> all(bytesOf(in), bytesOf(in) + in.bytes());
    runAllReduce(bufferView(all, in.dtype), op);
    std::memcpy(out.data, all.data() + static_cast<size_t>(rank_) * out.bytes(), out.bytes());
  });
}

WorkPtr HierarchicalBackend::gather(Tensor in, Tensor out, int root) {
  checkCpuMemory(in, "gather", kWhat);
  checkRooted("gather", out, in.count, size(), rank_, root);
  const auto call = CollectiveCall::rooted(CallKind::Gather, in, root);
  if (in.count == 0) return completedWork(call.describe());
  return submit(call, [this, in, out, root] {
    std::vector<uint8_t> all(in.bytes() * static_cast<size_t>(size()));
    runAllGatherV(in, bufferView(all, in.dtype), std::vector<size_t>(static_cast<size_t>(size()), in.count));
    if (rank_ == root) std::memcpy(out.data, all.data(), all.size());
  });
}

// The root's whole buffer goes to every rank, which keeps its chunk.
WorkPtr HierarchicalBackend::scatter(Tensor in, Tensor out, int root) {
  checkCpuMemory(out, "scatter", kWhat);
  checkRooted("scatter", in, out.count, size(), rank_, root);
  const auto call = CollectiveCall::rooted(CallKind::Scatter, out, root);
  if (out.count == 0) return completedWork(call.describe());
  return submit(call, [this, in, out, root] {
    std::vector<uint8_t> all(out.bytes() * static_cast<size_t>(size()));
    if (rank_ == root) std::memcpy(all.data(), in.data, all.size());
    runBroadcast(bufferView(all, out.dtype), root);
    std::memcpy(out.data, all.data() + static_cast<size_t>(rank_) * out.bytes(), out.bytes());
  });
}

WorkPtr HierarchicalBackend::barrier() {
  return submit(CollectiveCall{}, [this] {
    local_->barrier()->wait();
    if (leaders_) leaders_->barrier()->wait();
    local_->barrier()->wait();
  });
}

}  // namespace accel
