// SPDX-License-Identifier: Apache-2.0
#include "runtime/ddp/bucketing.h"

#include <algorithm>
#include <map>
#include <utility>

namespace accel {

std::vector<Bucket> assignBuckets(const std::vector<GradientInfo>& gradients, size_t first_cap, size_t cap) {
  using Key = std::pair<int, int>;  // (device, dtype): buckets never mix them
  std::map<Key, Bucket> open;
  std::map<Key, bool> closed_one;  // the group's first bucket is closed: later limits are `cap`
  std::vector<Bucket> done;
  for (size_t i = 0; i < gradients.size(); ++i) {
    const auto& g = gradients[i];
    Key key{static_cast<int>(g.device), static_cast<int>(g.dtype)};
    Bucket& b = open[key];
    b.params.push_back(i);
    b.bytes += g.count * dtypeSize(g.dtype);
    if (b.bytes >= (closed_one[key] ? cap : first_cap)) {
      done.push_back(std::move(b));
      b = Bucket{};
      closed_one[key] = true;
    }
  }
  for (auto& [key, b] : open) {
    if (!b.params.empty()) done.push_back(std::move(b));
  }
  std::sort(done.begin(), done.end(),
            [](const Bucket& a, const Bucket& b) { return a.params.front() < b.params.front(); });
  std::reverse(done.begin(), done.end());
  return done;
}

}  // namespace accel
