// SPDX-License-Identifier: Apache-2.0
// A rank's flight record as JSON, close to torch's flight recorder dump (_dump_fr_trace_json):
// the same field names where the meaning is the same (entries with record_id, pg_id,
// process_group, collective_seq_id, profiling_name "accel:all_reduce", time_created_ns,
// time_discovered_started_ns, time_discovered_completed_ns, input_sizes, input_dtypes with torch's
// dtype names, state, retired; pg_config), plus what accel knows besides (rank, host, pid, the
// ring's capacity and how many records it has seen, the moment it was read, each call's reduce
// op and root, the job's run id and round). Times are the real-time clock's nanoseconds, as torch's. "version" names
// the layout: "accel-1". Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "lib/launch/flight/flight_verdict.h"

namespace accel::launch::flight {

inline constexpr const char* kJsonVersion = "accel-1";

// `run_id` and `round`: the job's and the round's, so that records of two jobs are told apart.
nlohmann::json flightJson(const RankRecord& rank, const std::string& run_id, int round);

// A file flightJson wrote, back (times on the real-time clock, the offset 0). Throws Error
// naming what is wrong.
RankRecord recordFromJson(const nlohmann::json& j);

}  // namespace accel::launch::flight
