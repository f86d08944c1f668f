// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/distributed_sampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "lib/common/error.h"

namespace accel {

DistributedSampler::DistributedSampler(size_t dataset_size, int world, int rank, SamplerOptions options)
    : size_(dataset_size), world_(world), rank_(rank), options_(options) {
  if (world < 1 || rank < 0 || rank >= world) {
    throw Error(fmt::format("DistributedSampler: rank {} is not in a world of {}", rank, world));
  }
  const size_t w = static_cast<size_t>(world);
  // Python: ceil((n - w) / w) when dropping a tail that does not divide, else ceil(n / w).
  num_samples_ = options.drop_last && size_ % w != 0 ? (size_ >= w ? (size_ - w + w - 1) / w : 0) : (size_ + w - 1) / w;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order(size_);
  if (options_.shuffle) {
    auto generator = at::detail::createCPUGenerator(options_.seed + static_cast<uint64_t>(epoch_));
    const at::Tensor perm = torch::randperm(static_cast<int64_t>(size_), generator, torch::kLong);
    const int64_t* p = perm.data_ptr<int64_t>();
    order.assign(p, p + size_);
  } else {
    for (size_t i = 0; i < size_; ++i) order[i] = static_cast<int64_t>(i);
  }
  const size_t total = totalSize();
  if (order.size() > total) {
    order.resize(total);
  } else {
    for (size_t i = 0; order.size() < total; ++i) order.push_back(order[i % size_]);  // wrap around, as Python
  }
  std::vector<int64_t> mine;
  for (size_t i = static_cast<size_t>(rank_); i < total; i += static_cast<size_t>(world_)) mine.push_back(order[i]);
  return mine;
}

}  // namespace accel
