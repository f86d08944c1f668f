// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/shm/shm_backend.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/reduce_ops.h"

namespace accel::comm::shm {

namespace {

// Operations up to this size run on the caller's thread when the queue is idle (op_queue.h).
constexpr size_t kSmallBytes = 64 << 10;
// How long a member whose calls differed waits for each other member's call: they all noticed
// at the same step, so it comes at once unless that member has died meanwhile.
constexpr auto kTellingTime = std::chrono::seconds(5);

uint8_t* bytesOf(const Tensor& t) { return static_cast<uint8_t*>(t.data); }

// memcpy, except that an empty copy may name a null buffer (a rank with nothing to give).
void copy(void* to, const void* from, size_t bytes) {
  if (bytes) std::memcpy(to, from, bytes);
}

// Member m's slice [first, second) of a chunk of n elements: equal shares, boundaries on 64-byte
// lines so that no two members write the same cache line.
std::pair<size_t, size_t> sliceOf(size_t n, int m, int members, size_t width) {
  const size_t line = std::max<size_t>(1, 64 / width);
  auto edge = [&](int k) {
    return k == members ? n : n * static_cast<size_t>(k) / static_cast<size_t>(members) / line * line;
  };
  return {edge(m), edge(m + 1)};
}

// dst = src(0) op src(1) op … in member order, so every member's slice comes out the same way.
template <typename Source>
void reduceInOrder(uint8_t* dst, Source src, int members, size_t n, DataType t, ReduceOp op) {
  if (n == 0) return;
  const ReduceFunction f = reduceFunction(t, op);
  f(dst, src(0), src(1), n);
  for (int q = 2; q < members; ++q) f(dst, dst, src(q), n);
  if (op == ReduceOp::Avg) finishAverage({dst, n, t}, members);
}

}  // namespace

std::unique_ptr<ShmBackend> ShmBackend::create(Store& store, int rank, int size, ShmOptions options,
                                               std::string& why_not) {
  auto seg = ShmSegment::open(store, rank, size, options.slot_bytes, why_not);
  if (!seg) return nullptr;
  if (options.names.empty()) {
    options.names.resize(static_cast<size_t>(size));
    std::iota(options.names.begin(), options.names.end(), 0);
  }
  auto watch = std::make_unique<CallWatch>(store, rank, size, options.names);
  return std::unique_ptr<ShmBackend>(new ShmBackend(std::move(seg), std::move(watch), rank, size, std::move(options)));
}

ShmBackend::ShmBackend(std::unique_ptr<ShmSegment> segment, std::unique_ptr<CallWatch> watch, int rank, int size,
                       ShmOptions options)
    : rank_(rank),
      size_(size),
      options_(std::move(options)),
      seg_(std::move(segment)),
      watch_(std::move(watch)),
      steps_(*seg_, rank, options_.names, options_.timeout) {
  queue_ = std::make_unique<OpQueue>(groupFailureText(
      options_.names[static_cast<size_t>(rank)], size, options_.diagnose,
      [this](const CollectiveCall&, const std::exception&, std::chrono::steady_clock::duration) {
        Findings f{watch_->knownVerdict(), {}};
        if (steps_.lastMissing() >= 0) f.clues.told = {steps_.lastMissing()};
        return f;
      },
      options_.part));
  queue_->setLabel(fmt::format("shm rank {} of {}{}", options_.names[static_cast<size_t>(rank)], size,
                               options_.part.empty() ? "" : " (" + options_.part + ")"));
  if (options_.part.empty()) queue_->recordFlights(size, rank);
}

ShmBackend::~ShmBackend() = default;

// Every operation's first step checks that all members made the same call (shm_steps.h). When
// one did not, every member learns at that same step; they tell each other their calls through
// the store, so each one's error lists them all.
// A template, not a std::function inside the queue's: one allocation per operation, not two,
// which a small all_reduce would notice.
template <typename Run> WorkPtr ShmBackend::submit(const CollectiveCall& call, size_t bytes, Run run) {
  return queue_->submit(
      call,
      [this, run = std::move(run)](const CollectiveCall& numbered) {
        steps_.expect(numbered);
        try {
          run();
        } catch (const ShmCallsDiffer& differ) {
          throw CommError(watch_->exchange(fmt::format("step{}", differ.step), numbered, kTellingTime));
        }
      },
      bytes <= kSmallBytes);
}

void ShmBackend::abandon() { steps_.abandon(); }

// Chunk k: copy in (all but this member's own slice, which it reads in place) → step → copy out
// chunk k-1's result, reduce this member's slice of chunk k into the result area → step → …
void ShmBackend::runAllReduce(Tensor t, ReduceOp op) {
  const size_t width = dtypeSize(t.dtype), per = seg_->slotBytes() / width;
  const size_t chunks = (t.count + per - 1) / per;
  uint8_t* data = bytesOf(t);
  auto extent = [&](size_t k) { return std::min(per, t.count - k * per); };
  for (size_t k = 0; k <= chunks; ++k) {
    if (k < chunks) {
      const auto [lo, hi] = sliceOf(extent(k), rank_, size_, width);
      uint8_t* slot = seg_->slot(rank_, steps_.writeParity());
      const uint8_t* in = data + k * per * width;
      copy(slot, in, lo * width);
      copy(slot + hi * width, in + hi * width, (extent(k) - hi) * width);
    }
    steps_.sync();
    const int p = steps_.readParity();
    if (k > 0) copy(data + (k - 1) * per * width, seg_->result(p), extent(k - 1) * width);
    if (k == chunks) break;
    const auto [lo, hi] = sliceOf(extent(k), rank_, size_, width);
    const uint8_t* mine = data + (k * per + lo) * width;
    reduceInOrder(
        seg_->result(steps_.writeParity()) + lo * width,
        [&](int q) { return q == rank_ ? mine : seg_->slot(q, p) + lo * width; }, size_, hi - lo, t.dtype, op);
  }
}

// The root fills every slot of a parity at once (one area of size * slotBytes()).
void ShmBackend::runBroadcast(Tensor t, int root) {
  const size_t width = dtypeSize(t.dtype), per = seg_->slotBytes() * static_cast<size_t>(size_) / width;
  uint8_t* data = bytesOf(t);
  for (size_t off = 0; off < t.count; off += per) {
    const size_t n = std::min(per, t.count - off);
    if (rank_ == root) copy(seg_->slots(steps_.writeParity()), data + off * width, n * width);
    steps_.sync();
    if (rank_ != root) copy(data + off * width, seg_->slots(steps_.readParity()), n * width);
  }
}

void ShmBackend::runAllGatherV(Tensor in, Tensor out, const std::vector<size_t>& counts, int root) {
  const size_t width = dtypeSize(in.dtype), per = seg_->slotBytes() / width;
  const std::vector<size_t> displ = offsetsOf(counts);
  const size_t longest = *std::max_element(counts.begin(), counts.end());
  auto piece = [&](size_t count, size_t off) { return count > off ? std::min(per, count - off) : 0; };
  for (size_t off = 0; off < longest; off += per) {
    copy(seg_->slot(rank_, steps_.writeParity()), bytesOf(in) + off * width, piece(in.count, off) * width);
    steps_.sync();
    if (root >= 0 && rank_ != root) continue;
    for (int q = 0; q < size_; ++q) {
      const size_t n = piece(counts[static_cast<size_t>(q)], off);
      copy(bytesOf(out) + (displ[static_cast<size_t>(q)] + off) * width, seg_->slot(q, steps_.readParity()), n * width);
    }
  }
}

// Each member's slot holds one piece for every member; member m reduces piece m of every slot.
void ShmBackend::runReduceScatter(Tensor in, Tensor out, ReduceOp op) {
  const size_t width = dtypeSize(in.dtype), m = out.count;
  const size_t per = std::max<size_t>(1, seg_->slotBytes() / width / static_cast<size_t>(size_));
  for (size_t off = 0; off < m; off += per) {
    const size_t n = std::min(per, m - off);
    uint8_t* slot = seg_->slot(rank_, steps_.writeParity());
    for (int q = 0; q < size_; ++q) {
      if (q != rank_) copy(slot + q * per * width, bytesOf(in) + (q * m + off) * width, n * width);
    }
    steps_.sync();
    const uint8_t* mine = bytesOf(in) + (rank_ * m + off) * width;
    const size_t at = static_cast<size_t>(rank_) * per * width;
    reduceInOrder(
        bytesOf(out) + off * width, [&](int q) { return q == rank_ ? mine : seg_->slot(q, steps_.readParity()) + at; },
        size_, n, in.dtype, op);
  }
}

void ShmBackend::runScatter(Tensor in, Tensor out, int root) {
  const size_t width = dtypeSize(out.dtype), per = seg_->slotBytes() / width;
  for (size_t off = 0; off < out.count; off += per) {
    const size_t n = std::min(per, out.count - off);
    if (rank_ == root) {
      for (int q = 0; q < size_; ++q) {
        copy(seg_->slot(q, steps_.writeParity()), bytesOf(in) + (q * out.count + off) * width, n * width);
      }
    }
    steps_.sync();
    copy(bytesOf(out) + off * width, seg_->slot(rank_, steps_.readParity()), n * width);
  }
}

// Each member's slot holds one piece for every member, as in reduce_scatter; after the step,
// member m copies piece m of every slot out. all_to_all_v's first step has every member publish
// its counts, so that all agree on the number of steps and all refuse counts that do not match.
void ShmBackend::runAllToAllV(Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                              const std::vector<size_t>& recv_counts, size_t longest) {
  const size_t width = dtypeSize(in.dtype), members = static_cast<size_t>(size_);
  if (longest == 0) longest = agreeOnCounts(send_counts, recv_counts);
  const size_t per = std::max<size_t>(1, seg_->slotBytes() / width / members);
  const std::vector<size_t> sent_at = offsetsOf(send_counts), received_at = offsetsOf(recv_counts);
  auto piece = [&](size_t count, size_t off) { return count > off ? std::min(per, count - off) : 0; };
  for (size_t off = 0; off < longest; off += per) {
    uint8_t* slot = seg_->slot(rank_, steps_.writeParity());
    for (size_t q = 0; q < members; ++q) {
      copy(slot + q * per * width, bytesOf(in) + (sent_at[q] + off) * width, piece(send_counts[q], off) * width);
    }
    steps_.sync();
    const size_t mine = static_cast<size_t>(rank_) * per * width;
    for (size_t q = 0; q < members; ++q) {
      copy(bytesOf(out) + (received_at[q] + off) * width, seg_->slot(static_cast<int>(q), steps_.readParity()) + mine,
           piece(recv_counts[q], off) * width);
    }
  }
}

// Every member publishes both its lists; each then checks the whole matrix, so all of them find
// the same disagreement at the same step. Returns the most any member sends any other.
size_t ShmBackend::agreeOnCounts(const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts) {
  const size_t members = static_cast<size_t>(size_), bytes = 2 * members * sizeof(uint64_t);
  if (bytes > seg_->slotBytes()) {
    throw CommError(fmt::format("all_to_all_v: the shared-memory chunk of {} bytes cannot hold the counts of {} ranks",
                                seg_->slotBytes(), size_));
  }
  auto* mine = reinterpret_cast<uint64_t*>(seg_->slot(rank_, steps_.writeParity()));
  for (size_t q = 0; q < members; ++q) {
    mine[q] = send_counts[q];
    mine[members + q] = recv_counts[q];
  }
  steps_.sync();
  auto lists = [&](size_t m) {
    return reinterpret_cast<const uint64_t*>(seg_->slot(static_cast<int>(m), steps_.readParity()));
  };
  size_t longest = 0;
  for (size_t from = 0; from < members; ++from) {
    for (size_t to = 0; to < members; ++to) {
      const uint64_t sends = lists(from)[to], expects = lists(to)[members + from];
      if (sends != expects) {
        throw CommError(fmt::format(
            "all_to_all_v: rank {} sends rank {} {} elements, but rank {} expects {} from rank "
            "{} (rank r's send_counts[q] must equal rank q's recv_counts[r])",
            options_.names[from], options_.names[to], sends, options_.names[to], expects, options_.names[from]));
      }
      longest = std::max<size_t>(longest, sends);
    }
  }
  return longest;
}

Backend::Memory ShmBackend::memory() const {
  return {DeviceType::CPU, "shared-memory collectives", "use the NCCL backend for GPU tensors"};
}

WorkPtr ShmBackend::startAllReduce(const CollectiveCall& call, Tensor t) {
  return submit(call, t.bytes(), [this, t, op = call.op] { runAllReduce(t, op); });
}

WorkPtr ShmBackend::startBroadcast(const CollectiveCall& call, Tensor t) {
  return submit(call, t.bytes(), [this, t, root = call.root] { runBroadcast(t, root); });
}

WorkPtr ShmBackend::startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                                    const std::vector<size_t>& counts) {
  return submit(call, out.bytes(), [this, in, out, counts] { runAllGatherV(in, out, counts, -1); });
}

WorkPtr ShmBackend::startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return submit(call, in.bytes(), [this, in, out, op = call.op] { runReduceScatter(in, out, op); });
}

WorkPtr ShmBackend::startGather(const CollectiveCall& call, Tensor in, Tensor out) {
  std::vector<size_t> counts(static_cast<size_t>(size_), in.count);
  return submit(call, in.bytes() * static_cast<size_t>(size_),
                [this, in, out, counts, root = call.root] { runAllGatherV(in, out, counts, root); });
}

WorkPtr ShmBackend::startScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return submit(call, out.bytes() * static_cast<size_t>(size_),
                [this, in, out, root = call.root] { runScatter(in, out, root); });
}

WorkPtr ShmBackend::startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out,
                                   const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts) {
  return submit(call, in.bytes() + out.bytes(),
                [this, in, out, send_counts, recv_counts] { runAllToAllV(in, out, send_counts, recv_counts, 0); });
}

// Equal chunks: every member knows the number of steps without asking.
WorkPtr ShmBackend::startAllToAll(const CollectiveCall& call, Tensor in, Tensor out) {
  const size_t chunk = in.count / static_cast<size_t>(size_);
  return submit(call, in.bytes(), [this, in, out, chunk] {
    const std::vector<size_t> chunks(static_cast<size_t>(size_), chunk);
    runAllToAllV(in, out, chunks, chunks, chunk);
  });
}

WorkPtr ShmBackend::startBarrier(const CollectiveCall& call) {
  return submit(call, 0, [this] { steps_.sync(); });
}

}  // namespace accel::comm::shm
