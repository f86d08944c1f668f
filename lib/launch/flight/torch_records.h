// SPDX-License-Identifier: Apache-2.0
// A PyTorch worker's flight record, from torch's worker server on the socket accel's hook gave it
// (plan/torch_flight.h, flight/torch_hook.py): torch's JSON dump (fr_trace_json, answered without
// the GIL) turned into a record the verdict reads like the runtime's, and torch's own pickle dump
// (which torch's fr_trace reads), each within a time limit that holds whatever the rank does.
// Blocking; for the process that collects stacks (stacks/stack_collector.h).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/launch/flight/flight_text.h"

namespace accel::launch::flight {

// POSTs /handler/`handler` to the worker server at `socket` and returns the body of a 200 answer;
// nullopt with `why` ("it did not answer within 3 s", "nothing listens at …: …") otherwise.
std::optional<std::string> askTorchServer(const std::string& socket, const std::string& handler,
                                          std::chrono::steady_clock::time_point deadline, std::string& why);

// torch's JSON dump as a record: its process groups (pg_config, by pg_id), each entry's sequence
// number in its group, operation (profiling_name without its backend: an operation accel does not
// name keeps torch's name; its reduce operation is not in the dump), element type, count (the
// first input's elements), state (retired or
// completed: completed) and times (time_created_ns on the real-time clock, made this machine's
// monotonic clock's with `realtime_offset_ns`). Throws Error naming what does not read.
RankFlight torchFlight(const nlohmann::json& dump, int rank, long long pid, int64_t read_ns,
                       int64_t realtime_offset_ns);

struct TorchRank {
  int rank = 0;
  long long pid = 0;
  std::string socket;  // its worker server (launch_env.h kFrSocket)
  bool nccl = false;   // on GPUs: torch's NCCL recorder, through its own handlers
};

// A rank's record from its worker server: on GPUs torch's NCCL recorder's (dump_nccl_trace_json),
// else, or where that one has no entries (a Gloo program on a GPU machine), its Gloo one
// (fr_trace_json); `pickle_handler` is then the handler of torch's pickle of the same recorder.
// nullopt with `why` when the rank gives none by `deadline`, or its record does not read.
std::optional<RankFlight> askTorchRecord(const TorchRank& r, std::chrono::steady_clock::time_point deadline,
                                         std::string& why, std::string& pickle_handler);
struct TorchAnswer {
  std::string flight;   // its record (flight_text.h), or ""
  std::string missing;  // why there is none: "it did not answer within 3 s", …
};

// Every rank's record at once (a thread each), all within `limit`; each rank's torch pickle dump
// also goes to `pickle_dir`/torch_rank_<rank> where that is not "" (torch's fr_trace reads the
// folder as it is). By rank, in `ranks`' order.
std::vector<TorchAnswer> readTorchRanks(const std::vector<TorchRank>& ranks, std::chrono::milliseconds limit,
                                        const std::string& pickle_dir);

}  // namespace accel::launch::flight
