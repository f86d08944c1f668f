// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/hierarchical/hierarchical_backend.h"

#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/reduce_ops.h"

namespace accel::comm::hierarchical {

namespace {

constexpr const char* kWhat = "shared-memory and Gloo collectives";

uint8_t* bytesOf(const Tensor& t) { return static_cast<uint8_t*>(t.data); }

Tensor bufferView(std::vector<uint8_t>& buf, DataType t) { return {buf.data(), buf.size() / dtypeSize(t), t}; }

}  // namespace

HierarchicalBackend::HierarchicalBackend(int rank, HostLayout layout, std::unique_ptr<Backend> local,
                                         std::unique_ptr<Backend> leaders, std::shared_ptr<CallWatch> leaders_watch)
    : rank_(rank), layout_(std::move(layout)), local_(std::move(local)), leaders_(std::move(leaders)) {
  queue_ = std::make_unique<OpQueue>(
      groupFailureText(rank_, size(), {},
                       [watch = std::move(leaders_watch)](const CollectiveCall&, const std::exception&,
                                                          std::chrono::steady_clock::duration) {
                         return Findings{watch->verdict(), {}};
                       }));
  queue_->setLabel(fmt::format("shm+gloo rank {} of {}", rank_, size()));
  queue_->recordFlights(size(), rank_);
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

// Through the leaders, as the other collectives: each host's ranks hand their sends to their
// leader (a local all_to_all_v whose only receiver is the leader), the leaders exchange one
// block per pair of hosts, and each leader hands every rank of its host what it receives. The
// counts every step needs come from one local all_gather of the host's ranks' lists.
void HierarchicalBackend::runAllToAllV(Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                                       const std::vector<size_t>& recv_counts) {
  const size_t world = static_cast<size_t>(size()), width = dtypeSize(in.dtype);
  const auto& mine = layout_.hosts[static_cast<size_t>(host())];
  const size_t members = mine.size(), me = static_cast<size_t>(layout_.localIndex(rank_));
  // lists[i * 2 * world ...]: local member i's send counts, then its receive counts.
  std::vector<int64_t> own(2 * world), lists(2 * world * members);
  for (size_t q = 0; q < world; ++q) {
    own[q] = static_cast<int64_t>(send_counts[q]);
    own[world + q] = static_cast<int64_t>(recv_counts[q]);
  }
  local_->allGather(cpuTensor(own.data(), own.size()), cpuTensor(lists.data(), lists.size()))->wait();
  auto sent_by = [&](size_t i) {
    size_t n = 0;
    for (size_t q = 0; q < world; ++q) n += static_cast<size_t>(lists[i * 2 * world + q]);
    return n;
  };
  // To the leader: every member's whole input, one after another.
  std::vector<size_t> to_leader(members, 0), at_leader(members, 0);
  to_leader[0] = in.count;
  if (me == 0)
    for (size_t i = 0; i < members; ++i) at_leader[i] = sent_by(i);
  std::vector<uint8_t> gathered(me == 0 ? std::accumulate(at_leader.begin(), at_leader.end(), size_t{0}) * width : 0);
  local_->allToAllV(in, bufferView(gathered, in.dtype), to_leader, at_leader)->wait();
  std::vector<uint8_t> delivered;
  std::vector<size_t> from_leader(members, 0), at_member(members, 0);
  at_member[0] = out.count;
  if (me == 0) delivered = exchangeBetweenHosts(gathered, in.dtype, lists, from_leader);
  local_->allToAllV(bufferView(delivered, in.dtype), out, from_leader, at_member)->wait();
}

// On a leader: `gathered` holds its members' inputs; returns what each member receives, member
// by member, each in its sources' rank order, and sets `lengths` to each member's share.
std::vector<uint8_t> HierarchicalBackend::exchangeBetweenHosts(const std::vector<uint8_t>& gathered, DataType t,
                                                               const std::vector<int64_t>& lists,
                                                               std::vector<size_t>& lengths) {
  const size_t world = static_cast<size_t>(size()), width = dtypeSize(t), hosts = layout_.hosts.size();
  const auto& mine = layout_.hosts[static_cast<size_t>(host())];
  const size_t members = mine.size();
  auto sends = [&](size_t i, size_t q) { return static_cast<size_t>(lists[i * 2 * world + q]); };
  auto expects = [&](size_t i, size_t q) { return static_cast<size_t>(lists[i * 2 * world + world + q]); };
  // Where member i's input starts in `gathered`, and its part for rank q within that input.
  std::vector<size_t> input_at(members, 0);
  for (size_t i = 1; i < members; ++i) {
    input_at[i] = input_at[i - 1];
    for (size_t q = 0; q < world; ++q) input_at[i] += sends(i - 1, q);
  }
  auto part_at = [&](size_t i, size_t q) {
    size_t at = input_at[i];
    for (size_t p = 0; p < q; ++p) at += sends(i, p);
    return at;
  };
  // To host h: for each of its ranks r, each member's part for r. From host h: for each member
  // j, each of h's ranks' part for j.
  std::vector<uint8_t> outgoing;
  std::vector<size_t> out_counts(hosts, 0), in_counts(hosts, 0);
  for (size_t h = 0; h < hosts; ++h) {
    for (int r : layout_.hosts[h]) {
      for (size_t i = 0; i < members; ++i) {
        const size_t n = sends(i, static_cast<size_t>(r)), at = part_at(i, static_cast<size_t>(r));
        outgoing.insert(outgoing.end(), gathered.begin() + static_cast<std::ptrdiff_t>(at * width),
                        gathered.begin() + static_cast<std::ptrdiff_t>((at + n) * width));
        out_counts[h] += n;
      }
    }
    for (size_t j = 0; j < members; ++j)
      for (int s : layout_.hosts[h]) in_counts[h] += expects(j, static_cast<size_t>(s));
  }
  std::vector<uint8_t> incoming(std::accumulate(in_counts.begin(), in_counts.end(), size_t{0}) * width);
  leaders_->allToAllV(bufferView(outgoing, t), bufferView(incoming, t), out_counts, in_counts)->wait();
  // Where, in `incoming`, member j's part from rank s starts.
  const std::vector<size_t> block_at = offsetsOf(in_counts);
  std::vector<size_t> cursor = block_at;
  std::vector<std::vector<size_t>> from(members, std::vector<size_t>(world, 0));
  for (size_t h = 0; h < hosts; ++h)
    for (size_t j = 0; j < members; ++j)
      for (int s : layout_.hosts[h]) {
        from[j][static_cast<size_t>(s)] = cursor[h];
        cursor[h] += expects(j, static_cast<size_t>(s));
      }
  std::vector<uint8_t> delivered;
  for (size_t j = 0; j < members; ++j) {
    lengths[j] = 0;
    for (size_t s = 0; s < world; ++s) {
      const size_t n = expects(j, s), at = from[j][s];
      delivered.insert(delivered.end(), incoming.begin() + static_cast<std::ptrdiff_t>(at * width),
                       incoming.begin() + static_cast<std::ptrdiff_t>((at + n) * width));
      lengths[j] += n;
    }
  }
  return delivered;
}

Backend::Memory HierarchicalBackend::memory() const {
  return {DeviceType::CPU, "shared-memory and Gloo collectives", "use the NCCL backend for GPU tensors"};
}

WorkPtr HierarchicalBackend::startAllReduce(const CollectiveCall& call, Tensor t) {
  return submit(call, [this, t, op = call.op] { runAllReduce(t, op); });
}

WorkPtr HierarchicalBackend::startBroadcast(const CollectiveCall& call, Tensor t) {
  return submit(call, [this, t, root = call.root] { runBroadcast(t, root); });
}

WorkPtr HierarchicalBackend::startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                                             const std::vector<size_t>& counts) {
  return submit(call, [this, in, out, counts] { runAllGatherV(in, out, counts); });
}

// As Gloo's: all-reduce a copy, keep this rank's chunk.
WorkPtr HierarchicalBackend::startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return submit(call, [this, in, out, op = call.op] {
    std::vector<uint8_t> all(bytesOf(in), bytesOf(in) + in.bytes());
    runAllReduce(bufferView(all, in.dtype), op);
    std::memcpy(out.data, all.data() + static_cast<size_t>(rank_) * out.bytes(), out.bytes());
  });
}

WorkPtr HierarchicalBackend::startGather(const CollectiveCall& call, Tensor in, Tensor out) {
  return submit(call, [this, in, out, root = call.root] {
    std::vector<uint8_t> all(in.bytes() * static_cast<size_t>(size()));
    runAllGatherV(in, bufferView(all, in.dtype), std::vector<size_t>(static_cast<size_t>(size()), in.count));
    if (rank_ == root) std::memcpy(out.data, all.data(), all.size());
  });
}

// The root's whole buffer goes to every rank, which keeps its chunk.
WorkPtr HierarchicalBackend::startScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return submit(call, [this, in, out, root = call.root] {
    std::vector<uint8_t> all(out.bytes() * static_cast<size_t>(size()));
    if (rank_ == root) std::memcpy(all.data(), in.data, all.size());
    runBroadcast(bufferView(all, out.dtype), root);
    std::memcpy(out.data, all.data() + static_cast<size_t>(rank_) * out.bytes(), out.bytes());
  });
}

WorkPtr HierarchicalBackend::startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out,
                                            const std::vector<size_t>& send_counts,
                                            const std::vector<size_t>& recv_counts) {
  return submit(call, [this, in, out, send_counts, recv_counts] { runAllToAllV(in, out, send_counts, recv_counts); });
}

WorkPtr HierarchicalBackend::startBarrier(const CollectiveCall& call) {
  return submit(call, [this] {
    local_->barrier()->wait();
    if (leaders_) leaders_->barrier()->wait();
    local_->barrier()->wait();
  });
}

}  // namespace accel::comm::hierarchical
