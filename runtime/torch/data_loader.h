// SPDX-License-Identifier: Apache-2.0
// Batches of an in-memory dataset (inputs and targets, first dimension = samples) for one rank,
// in the order of its DistributedSampler, moved to the training device. It knows where in the
// epoch it is, so that the Accelerator can end an accumulation window at the epoch's end, drop
// the sampler's padding from gathered metrics, and resume mid-epoch after loadState.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "runtime/torch/distributed_sampler.h"

namespace accel {

struct Batch {
  at::Tensor input, target;
  size_t first = 0;  // position of its first sample in this rank's epoch list
};

class TensorLoader {
 public:
  // Throws Error when inputs and targets differ in length or batch_size is 0.
  TensorLoader(at::Tensor inputs, at::Tensor targets, size_t batch_size, DistributedSampler sampler, at::Device device);
  // Not copyable: the accelerator ends an accumulation window at the end of the loader it
  // prepared, so `auto loader = accelerator.prepare(...)` (a copy it never sees) must not compile;
  // write `auto& loader`.
  TensorLoader(const TensorLoader&) = delete;
  TensorLoader& operator=(const TensorLoader&) = delete;
  // Starts epoch `epoch` (reshuffles; DistributedSampler.set_epoch) at its first batch.
  void setEpoch(int64_t epoch);
  // The next batch of this epoch, or nullopt once the epoch is over. The last one may be short.
  std::optional<Batch> next();
  // True once the epoch's last batch has been returned.
  bool atEnd() const { return position_ >= order_.size(); }
  size_t batchesPerEpoch() const { return (order_.size() + batch_size_ - 1) / batch_size_; }
  size_t batchSize() const { return batch_size_; }
  // Samples of this epoch returned so far.
  size_t position() const { return position_; }
  const DistributedSampler& sampler() const { return sampler_; }
  // Epoch and position, for checkpoints; loadState resumes at the batch after the saved one.
  // A state saved by `saved_world` ranks (0: this loader's world) resumes at the same global
  // sample: a position of p there is p × saved_world / world here (rounded down: the samples of
  // a partial step are seen again).
  std::vector<uint8_t> state() const;
  void loadState(const std::vector<uint8_t>& state, int saved_world = 0);  // Error on bytes that are not a state

 private:
  at::Tensor inputs_, targets_;
  size_t batch_size_;
  DistributedSampler sampler_;
  at::Device device_;
  std::vector<int64_t> order_;
  size_t position_ = 0;
};

}  // namespace accel
