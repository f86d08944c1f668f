// SPDX-License-Identifier: Apache-2.0
// This rank's flight recorder: every collective the user's code makes, in every group, goes in
// a ring (lib/common/flight_ring.h) as it is queued, starts and ends (op_queue.h writes them).
// The ring lies in the launcher's shared memory where there is some (launch_env.h kFlightFd, this
// rank's LOCAL_RANK), so the launcher reads it at a stop, at a lost machine and when asked,
// whether this process is stuck, stopped or gone; elsewhere in this process's own memory.
// ACCEL_FR_BUFFER_SIZE entries (launch_env.h kFlightEntries; 0: no recorder, every call here
// then does nothing). The steps that a larger group's operation makes in its inner groups are
// not the user's calls and are not recorded. Thread-safe; each call costs a read of the CPU's counter and a few
// stores (scripts/bench_flight).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lib/common/flight_ring.h"
#include "runtime/comm/collective_call.h"

namespace accel {

inline constexpr int kNoFlightGroup = -1;
inline constexpr uint64_t kNoFlightEntry = ~uint64_t{0};

// A group whose calls are recorded; its number, or kNoFlightGroup without a recorder. Numbers
// are given in the order groups are made, so ranks that make the same groups in the same order
// number them alike (torch's pg_id); a rank left out of a group takes its number all the same
// (flightSkipGroup), as every rank calls new_group.
int flightGroup(const std::string& label, int size, int rank);
void flightSkipGroup();

// While one lives on a thread, the groups made there are not recorded and take no number: the
// call check's own group under ACCEL_DEBUG=DETAIL (checked_backend.h), whose calls are not the
// user's.
class FlightUnrecorded {
 public:
  FlightUnrecorded();
  ~FlightUnrecorded();
  FlightUnrecorded(const FlightUnrecorded&) = delete;
  FlightUnrecorded& operator=(const FlightUnrecorded&) = delete;

 private:
  bool previous_;
};

// `call` (numbered) of `group` is queued, or already running when `running`; its entry, or
// kNoFlightEntry where nothing is recorded. `now`: flight::ticks().
uint64_t flightBegin(int group, const CollectiveCall& call, bool running, int64_t now);
void flightStart(uint64_t entry, int64_t now);
void flightEnd(uint64_t entry, bool ok, int64_t now);

// This process's ring as it is now; nullopt without a recorder.
std::optional<flight::Dump> flightDump();

}  // namespace accel
