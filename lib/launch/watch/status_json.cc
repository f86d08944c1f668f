// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/status_json.h"

#include <fmt/format.h>

namespace accel::launch::watch {

namespace {

using StatusValue = nlohmann::json;

StatusValue rankJson(const RankStatus& r) {
  return {{"rank", r.rank},
          {"local_rank", r.local_rank},
          {"pid", r.pid},
          {"running", r.running},
          {"exit_code", r.exit_code ? StatusValue(*r.exit_code) : StatusValue(nullptr)},
          {"stopped_by_launcher", r.stopped_by_launcher},
          {"output_age", r.output_age},
          {"stdout_bytes", r.stdout_bytes},
          {"stderr_bytes", r.stderr_bytes},
          {"frames", r.frames},
          {"collectives", r.collectives},
          {"cpu_seconds", r.cpu_seconds},
          {"resident_bytes", r.resident_bytes},
          {"progress", r.progress},
          {"collective", r.collective},
          {"collective_seconds", r.collective_seconds},
          {"lines", r.lines},
          {"gpu", r.gpu},
          {"gpu_percent", r.gpu_percent},
          {"gpu_bytes", r.gpu_bytes}};
}

// A field of `j` as T, or StatusError naming it.
template <class T> T field(const StatusValue& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw StatusError(fmt::format("field '{}' is missing", key));
  try {
    return it->get<T>();
  } catch (const StatusValue::exception&) {
    throw StatusError(fmt::format("field '{}' is a {}", key, it->type_name()));
  }
}

RankStatus rankFromJson(const StatusValue& j) {
  RankStatus r;
  r.rank = field<int>(j, "rank");
  r.local_rank = field<int>(j, "local_rank");
  r.pid = field<int>(j, "pid");
  r.running = field<bool>(j, "running");
  if (!j.at("exit_code").is_null()) r.exit_code = field<int>(j, "exit_code");
  r.stopped_by_launcher = field<bool>(j, "stopped_by_launcher");
  r.output_age = field<double>(j, "output_age");
  r.stdout_bytes = field<uint64_t>(j, "stdout_bytes");
  r.stderr_bytes = field<uint64_t>(j, "stderr_bytes");
  r.frames = field<uint64_t>(j, "frames");
  r.collectives = field<uint64_t>(j, "collectives");
  r.cpu_seconds = field<double>(j, "cpu_seconds");
  r.resident_bytes = field<uint64_t>(j, "resident_bytes");
  r.progress = field<std::string>(j, "progress");
  r.collective = field<std::string>(j, "collective");
  r.collective_seconds = field<double>(j, "collective_seconds");
  r.lines = field<std::vector<std::string>>(j, "lines");
  r.gpu = field<int>(j, "gpu");
  r.gpu_percent = field<int>(j, "gpu_percent");
  r.gpu_bytes = field<uint64_t>(j, "gpu_bytes");
  return r;
}

}  // namespace

MachineStatus statusOf(const StatusValue& j);

StatusValue statusJson(const MachineStatus& s) {
  StatusValue ranks = StatusValue::array();
  for (const auto& r : s.ranks) ranks.push_back(rankJson(r));
  return {{"job", s.job},
          {"host", s.host},
          {"role", s.role},
          {"version", s.version},
          {"machine", s.machine},
          {"decides", s.decides},
          {"round", s.round},
          {"restarts", s.restarts},
          {"max_restarts", s.max_restarts},
          {"world_size", s.world_size},
          {"machines", s.machines},
          {"started", s.started},
          {"round_seconds", s.round_seconds},
          {"events", s.events},
          {"ended", s.ended},
          {"exit_code", s.exit_code},
          {"verdict", s.verdict},
          {"ranks", ranks}};
}

MachineStatus statusFromJson(const StatusValue& j) {
  if (!j.is_object()) throw StatusError("a status is no JSON object");
  try {
    return statusOf(j);
  } catch (const StatusValue::exception& e) {
    throw StatusError(fmt::format("a status field is missing or wrong: {}", e.what()));
  }
}

MachineStatus statusOf(const StatusValue& j) {
  MachineStatus s;
  s.job = field<std::string>(j, "job");
  s.host = field<std::string>(j, "host");
  s.role = field<std::string>(j, "role");
  s.version = field<std::string>(j, "version");
  s.machine = field<int>(j, "machine");
  s.decides = field<bool>(j, "decides");
  s.round = field<int>(j, "round");
  s.restarts = field<int>(j, "restarts");
  s.max_restarts = field<int>(j, "max_restarts");
  s.world_size = field<int>(j, "world_size");
  s.machines = field<int>(j, "machines");
  s.started = field<double>(j, "started");
  s.round_seconds = field<double>(j, "round_seconds");
  s.events = field<std::string>(j, "events");
  s.ended = field<bool>(j, "ended");
  s.exit_code = field<int>(j, "exit_code");
  s.verdict = field<std::string>(j, "verdict");
  const StatusValue& ranks = j.at("ranks");
  if (!ranks.is_array() || ranks.size() > kMaxStatusRanks) {
    throw StatusError(fmt::format("field 'ranks': not a list of at most {}", kMaxStatusRanks));
  }
  for (const auto& r : ranks) s.ranks.push_back(rankFromJson(r));
  return s;
}

namespace {

std::string dumped(const StatusValue& j) { return j.dump(-1, ' ', false, StatusValue::error_handler_t::replace); }

// Each step leaves less of every rank; false when none is left to take.
bool lighten(std::vector<RankStatus>& ranks, int step) {
  for (auto& r : ranks) {
    if (step == 0) r.lines.clear();
    if (step == 1) r.progress.clear(), r.collective.clear();
  }
  return step < 2;
}

}  // namespace

std::string fittedStatusJson(MachineStatus status, size_t max) {
  std::string text = dumped(statusJson(status));
  for (int step = 0; text.size() > max && lighten(status.ranks, step); ++step) text = dumped(statusJson(status));
  while (text.size() > max && !status.ranks.empty()) {
    status.ranks.resize(status.ranks.size() * 3 / 4);
    text = dumped(statusJson(status));
  }
  return text;
}

std::string fittedJobViewJson(JobView view, size_t max) {
  std::string text = jobViewJson(view);
  if (text.size() <= max) return text;
  view.note += std::string(view.note.empty() ? "" : "; ") +
               "the view was cut to fit the job channel: accel top on machine 0 shows all of it";
  for (int step = 0; text.size() > max && step < 2; ++step) {
    for (auto& m : view.machines) lighten(m.status.ranks, step);
    text = jobViewJson(view);
  }
  for (size_t i = view.machines.size(); text.size() > max && i > 1; --i) {
    view.machines[i - 1].status.ranks.clear();
    text = jobViewJson(view);
  }
  while (text.size() > max && !view.machines.empty() && !view.machines[0].status.ranks.empty()) {
    view.machines[0].status.ranks.resize(view.machines[0].status.ranks.size() * 3 / 4);
    text = jobViewJson(view);
  }
  return text;
}

std::string jobViewJson(const JobView& view) {
  StatusValue machines = StatusValue::array();
  for (const auto& m : view.machines) {
    StatusValue j = statusJson(m.status);
    j["heard"] = m.heard;
    machines.push_back(std::move(j));
  }
  return StatusValue{{"machines", machines}, {"note", view.note}}.dump(-1, ' ', false,
                                                                       StatusValue::error_handler_t::replace);
}

JobView jobViewFromJson(const std::string& text) {
  const StatusValue j = StatusValue::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw StatusError("the answer is no JSON object");
  if (!j.contains("machines") || !j.contains("note")) throw StatusError("the answer is no job's view");
  JobView view;
  view.note = field<std::string>(j, "note");
  const StatusValue& machines = j.at("machines");
  if (!machines.is_array() || machines.size() > kMaxStatusMachines) throw StatusError("field 'machines': no list");
  for (const auto& m : machines) view.machines.push_back({statusFromJson(m), field<double>(m, "heard")});
  return view;
}

}  // namespace accel::launch::watch
