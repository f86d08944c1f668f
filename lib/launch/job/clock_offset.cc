// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/clock_offset.h"

#include <algorithm>

namespace accel::launch::job {

void ClockOffset::sent(long long id, int64_t t0) { in_flight_ = std::make_pair(id, t0); }

void ClockOffset::echoed(long long id, int64_t tm, int64_t t1) {
  if (!in_flight_ || in_flight_->first != id || t1 < in_flight_->second) return;
  const int64_t t0 = in_flight_->second;
  in_flight_.reset();
  samples_.push_back({tm - (t0 + (t1 - t0) / 2), t1 - t0});
  if (samples_.size() > kSamples) samples_.pop_front();
}

std::optional<ClockOffset::Estimate> ClockOffset::estimate() const {
  if (samples_.empty()) return std::nullopt;
  const auto best = std::min_element(samples_.begin(), samples_.end(),
                                     [](const Sample& a, const Sample& b) { return a.round_trip < b.round_trip; });
  return Estimate{best->offset, (best->round_trip + 1) / 2};
}

}  // namespace accel::launch::job
