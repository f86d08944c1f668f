// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/event.h"

#include <time.h>

#include <chrono>
#include <cmath>

#include <fmt/format.h>

namespace accel::launch::watch {

namespace {

using EventJson = nlohmann::ordered_json;

// torchrun's worker states for accel's worker events: START, then SUCCEEDED, FAILED or
// TERMINATED (stopped by its agent), as _get_worker_state names them.
std::string workerState(const Event& e) {
  if (e.name == "worker_started") return "START";
  const EventJson& f = e.fields;
  if (f.value("stopped_by_launcher", false)) return "TERMINATED";
  return f.value("exit_code", 0) == 0 ? "SUCCEEDED" : "FAILED";
}

EventJson nullable(const EventJson& fields, const char* key) {
  return fields.contains(key) ? fields[key] : EventJson(nullptr);
}

}  // namespace

std::string utcTime(double seconds) {
  const auto whole = static_cast<time_t>(std::floor(seconds));
  const auto micros = static_cast<long>(std::lround((seconds - static_cast<double>(whole)) * 1e6));
  struct tm t {};
  ::gmtime_r(&whole, &t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                     t.tm_min, t.tm_sec, std::min(micros, 999999L));
}

double wallClockNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string eventLine(const Event& e) {
  EventJson line = {{"time", utcTime(e.time)}, {"event", e.name},      {"job", e.job},
                    {"host", e.host},          {"machine", e.machine}, {"round", e.round}};
  for (const auto& [key, value] : e.fields.items()) {
    if (!line.contains(key)) line[key] = value;
  }
  return line.dump(-1, ' ', false, EventJson::error_handler_t::replace);
}

std::string pythonJson(const EventJson& value) {
  if (value.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      out += fmt::format("{}{}: {}", first ? "" : ", ", EventJson(key).dump(-1, ' ', true), pythonJson(item));
      first = false;
    }
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + pythonJson(value[i]);
    return out + "]";
  }
  return value.dump(-1, ' ', true, EventJson::error_handler_t::replace);
}

std::optional<std::string> torchrunLine(const Event& e, const TorchrunContext& c) {
  const bool worker = e.name == "worker_started" || e.name == "worker_exited";
  std::string state;
  if (worker) {
    state = workerState(e);
  } else if (e.name == "rendezvous_done") {
    state = "RENDEZVOUS";
  } else if (e.name == "job_ended") {
    state = e.fields.value("exit_code", 1) == 0 ? "SUCCEEDED" : "FAILED";
  } else {
    return std::nullopt;
  }
  EventJson md = {{"group_world_size", c.machines}, {"entry_point", c.entry_point}};
  if (worker) {
    const bool failed = state == "FAILED";
    md["local_rank"] = EventJson::array({nullable(e.fields, "local_rank")});
    md["role_rank"] = EventJson::array({nullable(e.fields, "rank")});
    md["role_world_size"] = EventJson::array({c.world_size});
    md["exit_code"] = EventJson::array({failed ? nullable(e.fields, "exit_code") : EventJson(nullptr)});
    md["worker_pid"] = EventJson::array({failed ? nullable(e.fields, "pid") : EventJson(nullptr)});
  }
  EventJson metadata = {
      {"run_id", e.job},
      {"global_rank", worker ? nullable(e.fields, "rank") : EventJson(nullptr)},
      {"group_rank", e.name == "rendezvous_done" ? EventJson(nullptr) : EventJson(e.machine)},
      {"worker_id", worker ? EventJson(fmt::format("{}", e.fields.value("pid", 0))) : EventJson(nullptr)},
      {"role", c.role},
      {"hostname", e.host},
      {"state", state},
      {"total_run_time", static_cast<long long>(c.run_seconds)},
      {"rdzv_backend", c.rdzv_backend},
      {"raw_error", worker && state == "FAILED" ? nullable(e.fields, "error") : EventJson(nullptr)},
      {"metadata", pythonJson(md)},
      {"agent_restarts", c.restarts},
      {"duration_ms", nullable(e.fields, "duration_ms")}};
  EventJson event = {{"name", "torchelastic.worker.status." + state},
                     {"source", worker ? "WORKER" : "AGENT"},
                     {"timestamp", 0},
                     {"metadata", metadata}};
  return pythonJson(event);
}

}  // namespace accel::launch::watch
