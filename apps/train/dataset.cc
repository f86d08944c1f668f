// SPDX-License-Identifier: Apache-2.0
#include "apps/train/dataset.h"

#include <cmath>

namespace accel::train {

namespace {

// splitmix64: a tiny generator whose output is the same everywhere (std::normal_distribution's
// is implementation-defined).
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  double normal() {  // Box-Muller
    double u = uniform() + 1e-12, v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

void draw(Random& r, const std::vector<float>& prototypes, size_t n, Dataset& out) {
  for (size_t i = 0; i < n; ++i) {
    int32_t label = static_cast<int32_t>(r.next() % kClasses);
    out.y.push_back(label);
    for (int f = 0; f < kFeatures; ++f) {
      out.x.push_back(prototypes[static_cast<size_t>(label * kFeatures + f)] + static_cast<float>(0.9 * r.normal()));
    }
  }
}

}  // namespace

void makeDataset(size_t train, size_t test, Dataset& train_set, Dataset& test_set) {
  Random r{20261122};
  std::vector<float> prototypes(kClasses * kFeatures);
  for (auto& p : prototypes) p = static_cast<float>(r.uniform() * 2.0);
  draw(r, prototypes, train, train_set);
  draw(r, prototypes, test, test_set);
}

}  // namespace accel::train
