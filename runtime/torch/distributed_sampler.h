// SPDX-License-Identifier: Apache-2.0
// Which samples each rank reads: exactly the indices PyTorch's
// torch.utils.data.DistributedSampler gives for the same dataset size, world, rank, seed, epoch,
// shuffle and drop_last (the permutation is libtorch's own randperm with a generator seeded
// seed + epoch, as Python's), so a C++ and a Python run of one job see the same data. Without
// drop_last the list is padded by wrapping around to a multiple of the world size; with it, the
// tail that does not divide is dropped. Pure apart from libtorch's generator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel {

struct SamplerOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  bool drop_last = false;
};

class DistributedSampler {
 public:
  DistributedSampler(size_t dataset_size, int world, int rank, SamplerOptions options = {});
  // Another epoch: another permutation when shuffling (DistributedSampler.set_epoch).
  void setEpoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  // This rank's indices for the current epoch, in order; numSamples() of them.
  std::vector<int64_t> indices() const;
  size_t numSamples() const { return num_samples_; }
  // numSamples() * world: the padded (or cut) length of the epoch's whole list.
  size_t totalSize() const { return num_samples_ * static_cast<size_t>(world_); }
  size_t datasetSize() const { return size_; }
  // Where rank `rank`'s sample number `position` of this epoch stands in the epoch's whole list;
  // at or past datasetSize() it is padding, a sample repeated to make the list divide.
  size_t listPosition(size_t position, int rank) const {
    return position * static_cast<size_t>(world_) + static_cast<size_t>(rank);
  }
  bool isPadding(size_t list_position) const { return list_position >= size_; }
  int world() const { return world_; }
  int rank() const { return rank_; }

 private:
  size_t size_;
  int world_, rank_;
  SamplerOptions options_;
  size_t num_samples_;
  int64_t epoch_ = 0;
};

}  // namespace accel
