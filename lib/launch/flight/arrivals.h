// SPDX-License-Identifier: Apache-2.0
// When each rank arrived at each collective of the job's first process group (the world's:
// group 0 of a rank's flight record, as the runtime and torch number groups), taken from the
// ranks' flight records as they grow, for the straggler watch (straggler_watch.h). An arrival is
// the time the rank called the collective (the record's enqueue time), on the clock of the
// machine that read the record (flight_ring.h nowNs) until the judging launcher moves it onto its
// own (job/clock_offset.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/common/flight_ring.h"

namespace accel::launch::flight {

struct Arrival {
  int rank = 0;
  uint64_t seq = 0;  // the collective's sequence number in group 0
  int64_t ns = 0;
};

struct ArrivalRank {
  int rank = 0;
  long long pid = 0;
};

// One machine's new arrivals since its last batch, with who its ranks are, in round `round` (a
// batch that reaches the judge after its round ended is dropped).
struct Arrivals {
  int round = 0;
  std::string host;
  std::vector<ArrivalRank> ranks;
  std::vector<Arrival> calls;
};

// The arrivals a rank's record holds that an earlier take() did not return. A record of another
// process (a later round's worker) starts afresh. Bounded: one cursor per rank, a few words each.
class ArrivalCursor {
 public:
  void take(const accel::flight::Dump& dump, std::vector<Arrival>& out);
  // The same for a record already cut down to group 0's calls: (sequence number, time), oldest first.
  void take(int rank, long long pid, const std::vector<std::pair<uint64_t, int64_t>>& calls, std::vector<Arrival>& out);
  void clear() { last_.clear(); }

 private:
  struct Seen {
    long long pid = 0;
    uint64_t seq = 0;  // the highest taken; 0 before the first
    bool any = false;
  };
  std::map<int, Seen> last_;  // by rank
};

}  // namespace accel::launch::flight
