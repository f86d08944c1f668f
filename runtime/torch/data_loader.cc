// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/data_loader.h"

#include <cstring>

#include <fmt/format.h>
#include <torch/torch.h>

#include "lib/common/error.h"

namespace accel {

TensorLoader::TensorLoader(at::Tensor inputs, at::Tensor targets, size_t batch_size, DistributedSampler sampler,
                           at::Device device)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      batch_size_(batch_size),
      sampler_(std::move(sampler)),
      device_(device) {
  if (inputs_.size(0) != targets_.size(0)) {
    throw Error(fmt::format("data loader: {} inputs but {} targets", inputs_.size(0), targets_.size(0)));
  }
  if (batch_size_ == 0) throw Error("data loader: the batch size is 0", "give a batch size of at least 1");
  if (static_cast<size_t>(inputs_.size(0)) != sampler_.datasetSize()) {
    throw Error(fmt::format("data loader: the sampler is for {} samples, the dataset has {}", sampler_.datasetSize(),
                            inputs_.size(0)));
  }
  setEpoch(sampler_.epoch());
}

void TensorLoader::setEpoch(int64_t epoch) {
  sampler_.setEpoch(epoch);
  order_ = sampler_.indices();
  position_ = 0;
}

std::optional<Batch> TensorLoader::next() {
  if (atEnd()) return std::nullopt;
  const size_t n = std::min(batch_size_, order_.size() - position_);
  const at::Tensor index = torch::from_blob(order_.data() + position_, {static_cast<int64_t>(n)}, torch::kLong);
  Batch batch{inputs_.index_select(0, index).to(device_), targets_.index_select(0, index).to(device_), position_};
  position_ += n;
  return batch;
}

std::vector<uint8_t> TensorLoader::state() const {
  const int64_t fields[2] = {sampler_.epoch(), static_cast<int64_t>(position_)};
  std::vector<uint8_t> out(sizeof(fields));
  std::memcpy(out.data(), fields, sizeof(fields));
  return out;
}

void TensorLoader::loadState(const std::vector<uint8_t>& state, int saved_world) {
  int64_t fields[2];
  if (state.size() != sizeof(fields)) {
    throw Error(fmt::format("data loader state: {} bytes, expected {}", state.size(), sizeof(fields)));
  }
  std::memcpy(fields, state.data(), sizeof(fields));
  if (saved_world > 0 && saved_world != sampler_.world() && fields[1] > 0) {
    fields[1] = fields[1] * saved_world / sampler_.world();  // the same global sample
  }
  setEpoch(fields[0]);
  if (fields[1] < 0 || static_cast<size_t>(fields[1]) > order_.size()) {
    throw Error(fmt::format("data loader state: position {} outside the epoch's {} samples", fields[1], order_.size()));
  }
  position_ = static_cast<size_t>(fields[1]);
}

}  // namespace accel
