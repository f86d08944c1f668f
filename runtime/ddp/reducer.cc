// SPDX-License-Identifier: Apache-2.0
#include "runtime/ddp/reducer.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lib/common/error.h"

namespace accel {

namespace {
std::vector<GradientBuffer> heldF32(const std::vector<size_t>& counts) {
  std::vector<GradientBuffer> out;
  for (size_t c : counts) out.push_back({nullptr, c, DataType::F32});
  return out;
}
}  // namespace

Reducer::Reducer(Backend& group, const std::vector<size_t>& counts, ReducerOptions options)
    : Reducer(group, heldF32(counts), options) {}

Reducer::Reducer(Backend& group, const std::vector<GradientBuffer>& gradients, ReducerOptions options)
    : group_(group), options_(options) {
  std::vector<GradientInfo> info;
  for (const auto& g : gradients) info.push_back({g.count, g.dtype, options_.device});
  buckets_ = assignBuckets(info, options_.first_bucket_bytes, options_.bucket_bytes);
  slots_.resize(gradients.size());
  marked_.assign(gradients.size(), false);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    size_t total = 0;
    for (size_t p : buckets_[b].params) total += gradients[p].count;
    const DataType dtype = gradients[buckets_[b].params.front()].dtype;  // one type per bucket
    state_.push_back({BucketStorage(total, dtype, options_.device, options_.device_index), 0, nullptr});
    size_t offset = 0;
    for (size_t p : buckets_[b].params) {
      const size_t bytes = gradients[p].count * dtypeSize(dtype);
      slots_[p] = {static_cast<uint8_t*>(state_[b].storage.data()) + offset, gradients[p].data, gradients[p].count,
                   bytes, b};
      offset += bytes;
    }
  }
  resetPending();
}

float* Reducer::gradient(size_t i) {
  const DataType dtype = state_[slots_[i].bucket].storage.dtype();
  if (dtype != DataType::F32) {
    throw Error(fmt::format("gradient({}): the gradient is {}, not f32", i, dtypeName(dtype)),
                "use gradientData() for half-precision gradients");
  }
  return static_cast<float*>(gradientData(i));
}

// Every bucket waits for all of its parameters again (construction, and the end of each step).
void Reducer::resetPending() {
  for (auto& s : state_) s.pending = 0;
  for (const auto& slot : slots_) ++state_[slot.bucket].pending;
}

void Reducer::zeroGradients() {
  for (auto& s : state_) s.storage.zero();
  for (const auto& slot : slots_) {
    if (slot.user) state_[slot.bucket].storage.clear(slot.user, slot.bytes);
  }
}

void Reducer::markReady(size_t i) { markReady(i, false); }
void Reducer::markReadyDivided(size_t i) { markReady(i, true); }

void Reducer::markReady(size_t i, bool divided) {
  if (i >= slots_.size()) throw Error(fmt::format("mark_ready: no parameter {} (there are {})", i, slots_.size()));
  if (marked_[i]) throw Error(fmt::format("mark_ready: parameter {} was marked ready twice in one step", i));
  if (divided && slots_[i].user) throw Error(fmt::format("mark_ready: parameter {}'s gradient is the caller's", i));
  marked_[i] = true;
  if (!sync_) return;
  // Pre-divide while the gradient is hot in cache, as DDP does: the sum is then the mean.
  Slot& s = slots_[i];
  BucketState& b = state_[s.bucket];
  if (s.user) b.storage.copy(s.view, s.user, s.bytes);
  if (group_.size() > 1 && !divided) b.storage.scale(s.view, s.count, 1.0f / static_cast<float>(group_.size()));
  if (--b.pending == 0) launchReadyBuckets();
}

// Strictly in bucket order: a ready bucket waits for every earlier one to be launched.
void Reducer::launchReadyBuckets() {
  while (next_launch_ < state_.size() && state_[next_launch_].pending == 0) {
    BucketState& b = state_[next_launch_++];
    b.work = group_.allReduce(b.storage.wire(options_.compression), ReduceOp::Sum);
  }
}

// Wall time during which at least one bucket's all-reduce was in flight: the union of the
// buckets' [launch, completion] intervals. Summing the intervals instead would count a bucket
// queued behind another twice and flatter the hidden share.
double Reducer::busySeconds() const {
  using TimePoint = std::chrono::steady_clock::time_point;
  std::vector<std::pair<TimePoint, TimePoint>> spans;
  for (const auto& b : state_) {
    if (b.work) spans.emplace_back(b.work->startedAt(), b.work->completedAt());
  }
  std::sort(spans.begin(), spans.end());
  double total = 0;
  for (size_t i = 0; i < spans.size();) {
    auto [start, end] = spans[i];
    for (++i; i < spans.size() && spans[i].first <= end; ++i) end = std::max(end, spans[i].second);
    total += std::chrono::duration<double>(end - start).count();
  }
  return total;
}

std::vector<size_t> Reducer::unmarked() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < marked_.size(); ++i) {
    if (!marked_[i]) out.push_back(i);
  }
  return out;
}

void Reducer::finish() {
  const std::vector<size_t> unready = unmarked();
  if (!unready.empty() && sync_) {
    throw Error(fmt::format("gradient sync: parameter(s) {} were never marked ready in this step; their buckets "
                            "were not reduced",
                            fmt::join(unready, ", ")),
                "call markReady for every parameter after its gradient is computed (mark unused ones too)");
  }
  const auto wait_start = std::chrono::steady_clock::now();
  for (auto& b : state_) {
    if (b.work) b.work->wait();
  }
  timing_.exposed += std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
  timing_.communication += busySeconds();
  for (auto& b : state_) {
    if (b.work) b.storage.unwire(options_.compression);
  }
  for (const auto& slot : slots_) {  // the mean back into the caller's buffers
    if (slot.user && state_[slot.bucket].work) state_[slot.bucket].storage.copy(slot.user, slot.view, slot.bytes);
  }
  for (auto& b : state_) {
    b.work.reset();
  }
  resetPending();
  std::fill(marked_.begin(), marked_.end(), false);
  next_launch_ = 0;
}

void broadcastParameters(Backend& group, const std::vector<Tensor>& params, int root) {
  std::vector<WorkPtr> works;
  for (const auto& p : params) works.push_back(group.broadcast(p, root));
  for (auto& w : works) w->wait();
}

}  // namespace accel
