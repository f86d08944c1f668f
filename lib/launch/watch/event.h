// SPDX-License-Identifier: Apache-2.0
// One event of a job's story (event_log.h): what happened, when, where, in which round, and its
// own fields. Two renderings: accel's line, one flat JSON object for events.jsonl and --event_log
// ({"time": RFC 3339 UTC, "event", "job", "host", "machine", "round", then the fields}); and
// torchrun's, the line its `--event-log-handler console` prints for the events it has (Python's
// json.dumps of torch.distributed.elastic.events.Event, key for key).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace accel::launch::watch {

struct Event {
  std::string name{};  // "worker_exited"
  double time = 0;     // seconds since the epoch
  std::string job{}, host{};
  int machine = 0;
  int round = 0;
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
};

// accel's line (without its newline). Fields named like the header's are not written twice.
std::string eventLine(const Event& e);

// What torchrun's console handler would print for `e`, or nullopt where torchrun has no such
// event. `context` is what torchrun's agent knows that accel's events carry elsewhere.
struct TorchrunContext {
  std::string role = "default";
  std::string rdzv_backend = "static";
  std::string entry_point = "python";
  int machines = 1;        // group_world_size
  int world_size = 1;      // role_world_size
  int restarts = 0;        // agent_restarts
  double run_seconds = 0;  // total_run_time (whole seconds, as torchrun's)
};
std::optional<std::string> torchrunLine(const Event& e, const TorchrunContext& context);

// Python's json.dumps (ensure_ascii, ", " and ": " separators) of `value`.
std::string pythonJson(const nlohmann::ordered_json& value);

// RFC 3339 in UTC with microseconds ("2026-11-29T05:01:02.345678Z").
std::string utcTime(double seconds_since_epoch);

double wallClockNow();

}  // namespace accel::launch::watch
