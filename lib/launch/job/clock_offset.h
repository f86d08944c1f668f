// SPDX-License-Identifier: Apache-2.0
// How far another machine's clock (its launcher's flight_ring.h nowNs) is from this launcher's,
// estimated as NTP does from timed exchanges over the job channel: this launcher notes when it
// sent a probe (t0) and when the echo came back (t1), the other machine put its clock's reading
// (tm) in the echo; tm was read between t0 and t1, so offset = tm - (t0 + t1) / 2 is right to
// within half the round trip. Of the last kSamples echoes the one with the shortest round trip
// is used: queueing on either side only lengthens a trip. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace accel::launch::job {

class ClockOffset {
 public:
  static constexpr size_t kSamples = 16;

  struct Estimate {
    int64_t offset_ns = 0;  // the other clock minus this one
    int64_t error_ns = 0;   // at most this far off: half the round trip
  };

  // A probe of id `id` leaves at `t0` (this clock).
  void sent(long long id, int64_t t0);
  // Its echo, read `tm` on the other clock, came back at `t1`; an echo of no probe in flight is ignored.
  void echoed(long long id, int64_t tm, int64_t t1);
  std::optional<Estimate> estimate() const;

 private:
  struct Sample {
    int64_t offset = 0, round_trip = 0;
  };
  std::optional<std::pair<long long, int64_t>> in_flight_;
  std::deque<Sample> samples_;
};

}  // namespace accel::launch::job
