// SPDX-License-Identifier: Apache-2.0
// Which gradients share an all-reduce: PyTorch DDP's compute_bucket_assignment_by_size. Pure.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/comm/types.h"

namespace accel {

struct GradientInfo {
  size_t count = 0;  // elements
  DataType dtype = DataType::F32;
  DeviceType device = DeviceType::CPU;
};

struct Bucket {
  std::vector<size_t> params;  // indices into the registration list, in registration order
  size_t bytes = 0;
};

inline constexpr size_t kDefaultFirstBucketBytes = size_t{1} << 20;  // DDP's 1 MiB
inline constexpr size_t kDefaultBucketBytes = size_t{25} << 20;      // DDP's bucket_cap_mb = 25

// Packs gradients greedily in registration order, per (device, dtype), closing a bucket once it
// reaches its limit (the first bucket of each group `first_cap`, later ones `cap`; a gradient
// larger than the limit gets a bucket of its own), orders buckets by their first gradient, then
// reverses the list: backward produces the last-registered gradients first, so the small first
// bucket (the first layers) is reduced last and the final all-reduce is short.
std::vector<Bucket> assignBuckets(const std::vector<GradientInfo>& gradients,
                                  size_t first_cap = kDefaultFirstBucketBytes, size_t cap = kDefaultBucketBytes);

}  // namespace accel
