// SPDX-License-Identifier: Apache-2.0
// Where a job's ranks part, judged from every rank's flight recorder (flight_text.h): in each
// process group (numbered alike on every rank: flight_ring.h), the first call that some member
// has not completed; who entered it, how long ago, and who never did, with the call each of those
// made last. That is one line for the failure summary:
//   all_reduce (f32 x 4194304) sum #1234 of group 0: ranks 0-6 entered it 31.2 s ago; rank 7
//   (host b, pid 4242) never did: its last was broadcast (f32 x 10) from rank 0 #1233
// Ranks whose calls at one place of a group's sequence differ (another op, type, size, reduce op
// or root) are named too, at the first such place. Times are compared within one rank's record
// only (each against the moment its own machine read it), so machines' clocks need not agree.
// Ranks without a record are listed with the reason their machine gave. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/launch/flight/flight_text.h"

namespace accel::launch::flight {

struct RankRecord {
  int rank = 0;
  std::string host;
  long long pid = 0;
  std::optional<RankFlight> flight;
  std::string missing;  // why there is no record: "it did not answer within 3 s", "host b was lost"
};

struct FlightVerdict {
  std::string line;                // where the ranks part; "" when they do not (every call completed alike)
  std::string mismatch;            // ranks whose calls differ at one place; "" when none
  std::vector<std::string> notes;  // "no flight record from rank 5: WHY", one per rank without
  std::vector<int> stuck;          // the ranks `line` names as never having entered the call
};

FlightVerdict judgeFlights(const std::vector<RankRecord>& ranks);

// "all_reduce (f32 x 1000) sum"; another recorder's operation by its name: "send (f32 x 10)".
std::string callDescription(const accel::flight::Call& c);

}  // namespace accel::launch::flight
