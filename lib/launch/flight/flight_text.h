// SPDX-License-Identifier: Apache-2.0
// A rank's flight recorder dump (lib/common/flight_ring.h) as compact text, the form in which it
// travels with the rank's stack from its machine to the launcher that judges the job
// (job/stack_gatherings.h) and is kept beside the stacks: a header line, one line per group, one
// line per call, numbers only but for the groups' labels. `read_ns` is when the ring was read,
// on the clock of the machine that read it (its calls' times are on the same clock), and the
// offset to that machine's real-time clock comes with it. At most the
// last `keep` calls are written. decodeFlight refuses anything else, naming the line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lib/common/flight_ring.h"

namespace accel::launch::flight {

inline constexpr size_t kSentCalls = 256;  // the calls of a rank that travel to the judging launcher

struct RankFlight {
  accel::flight::Dump dump;
  int64_t read_ns = 0;             // when the ring was read (its calls' clock)
  int64_t realtime_offset_ns = 0;  // that machine's real-time clock minus that clock, then
};

std::string encodeFlight(const RankFlight& f, size_t keep = kSentCalls);
// The other form of the text: no record, and why ("it did not answer within 3 s").
std::string encodeMissing(const std::string& why);
// The reason such a text gives; nullopt for a record.
std::optional<std::string> missingReason(const std::string& text);
// Throws Error "flight record line N: WHY" for text that is not one.
RankFlight decodeFlight(const std::string& text);

}  // namespace accel::launch::flight
