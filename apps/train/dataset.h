// SPDX-License-Identifier: Apache-2.0
// The reference trainer's data: a deterministic, generated 10-class problem with 64 features
// (8x8 "images": a class prototype plus Gaussian noise), identical on every machine and run, so
// results and docs/BENCHMARKS.md's accuracy reproduce exactly. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel::train {

inline constexpr int kFeatures = 64;
inline constexpr int kClasses = 10;

struct Dataset {
  std::vector<float> x;  // samples x kFeatures
  std::vector<int32_t> y;
  size_t size() const { return y.size(); }
};

// `train` and `test` samples drawn from the same class prototypes.
void makeDataset(size_t train, size_t test, Dataset& train_set, Dataset& test_set);

}  // namespace accel::train
