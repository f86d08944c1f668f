// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/job_messages.h"

#include "lib/launch/job/message_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/utf8.h"

namespace accel::launch::job {

namespace codec {

// ---- writing: every string within its bound ----

// Valid UTF-8 first (JSON's strings are: a worker may print any bytes), then cut to `max`.
std::string clamp(const std::string& text, size_t max) {
  const std::string s = validUtf8(text);
  if (s.size() <= max) return s;
  return std::string(utf8Prefix(s, max - 3)) + "...";
}

std::string shown(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 40)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? '?' : c;
  return out;
}

json clampLines(const std::vector<std::string>& lines) {
  json out = json::array();
  const size_t from = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;  // the last ones say most
  for (size_t i = from; i < lines.size(); ++i) out.push_back(clamp(lines[i], kMaxLineText));
  return out;
}

json failureJson(const WorkerFailure& f) {
  return {{"machine", f.machine},
          {"host", clamp(f.host, kMaxText)},
          {"rank", f.rank},
          {"who", clamp(f.who, kMaxText)},
          {"pid", f.pid},
          {"code", f.exit_code},
          {"exit", clamp(f.exit_text, kMaxText)},
          {"seconds", std::isfinite(f.seconds) ? f.seconds : 0.0},
          {"killed_from_outside", f.killed_from_outside},
          {"tail", clampLines(f.tail)},
          {"tail_of", clamp(f.tail_of, kMaxText)},
          {"raised", clamp(f.raised, kMaxText)},
          {"traceback", clampLines(f.traceback)}};
}

json optionalFailure(const std::optional<WorkerFailure>& f) { return f ? failureJson(*f) : json(); }

json toJson(const Join& m) {
  return {{"t", "join"},
          {"v", m.version},
          {"machine", m.machine},
          {"host", clamp(m.host, kMaxText)},
          {"pid", m.pid},
          {"machines", m.machines},
          {"min_machines", m.min_machines},
          {"world", m.world},
          {"token", clamp(m.token, kMaxText)},
          {"procs", m.procs},
          {"role", clamp(m.role, kMaxRoleText)}};
}
// The layout as runs of alike machines, "COUNT PROCS ROLE" (the role last: it may hold spaces).
json runsOf(const std::vector<plan::MachineShare>& layout) {
  json runs = json::array();
  for (size_t k = 0; k < layout.size();) {
    size_t n = 1;
    while (k + n < layout.size() && layout[k + n] == layout[k]) ++n;
    runs.push_back(fmt::format("{} {} {}", n, layout[k].procs, clamp(layout[k].role, kMaxRoleText)));
    k += n;
  }
  return runs;
}
json toJson(const Start& m) {
  return {{"t", "start"},          {"v", m.version},           {"port", m.port},
          {"machine", m.machine},  {"runs", runsOf(m.layout)}, {"round", m.round},
          {"restarts", m.restarts}};
}
json toJson(const Refuse& m) {
  return {
      {"t", "refuse"}, {"v", m.version}, {"message", clamp(m.message, kMaxText)}, {"hint", clamp(m.hint, kMaxText)}};
}
json toJson(const Stop& m) { return {{"t", "stop"}, {"round", m.round}, {"why", clamp(m.why, kMaxText)}}; }
json toJson(const Restart& m) {
  return {{"t", "restart"},         {"round", m.round},
          {"port", m.port},         {"failure", optionalFailure(m.failure)},
          {"restarts", m.restarts}, {"why", clamp(m.why, kMaxText)},
          {"machine", m.machine},   {"runs", runsOf(m.layout)}};
}
json toJson(const End& m) {
  return {{"t", "end"},
          {"code", m.code},
          {"signal", m.signal},
          {"message", clamp(m.message, kMaxText)},
          {"hint", clamp(m.hint, kMaxText)},
          {"failure", optionalFailure(m.failure)}};
}
json toJson(const Failed& m) {
  return {{"t", "failed"}, {"failure", failureJson(m.failure)}, {"replaces", m.replaces}};
}
json toJson(const Interrupted& m) { return {{"t", "interrupted"}, {"signal", m.signal}}; }
json toJson(const Ended& m) { return {{"t", "ended"}, {"round", m.round}, {"ok", m.ok}, {"saved", m.saved}}; }
json toJson(const Heartbeat&) { return {{"t", "hb"}}; }
json toJson(const Hold& m) { return {{"t", "hold"}, {"stopped", m.stopped}, {"machine", m.machine}}; }
json toJson(const Ask& m) { return {{"t", "ask"}, {"id", m.id}, {"rank", m.rank}}; }
json toJson(const Tell& m) { return {{"t", "tell"}, {"id", m.id}, {"text", clamp(m.text, kMaxText)}}; }
json toJson(const Progress&) { return {{"t", "pg"}}; }

WorkerFailure readFailure(const json& j) {
  Fields f(j, "failure: ");
  WorkerFailure w;
  w.machine = f.small("machine", 0, kMaxMachines);
  w.host = f.text("host");
  w.rank = f.small("rank", -1, kMaxRank);
  w.who = f.text("who");
  w.pid = f.small("pid", 0, kMaxPid);
  w.exit_code = f.small("code", 0, 255);
  w.exit_text = f.text("exit");
  w.seconds = f.seconds("seconds");
  w.killed_from_outside = f.flag("killed_from_outside");
  w.tail = f.lines("tail");
  w.tail_of = f.text("tail_of");
  w.raised = f.text("raised");
  w.traceback = f.lines("traceback");
  f.done();
  return w;
}

std::optional<WorkerFailure> readOptionalFailure(Fields& f) {
  const json& j = f.object("failure", true);
  if (j.is_null()) return std::nullopt;
  return readFailure(j);
}

int version(Fields& f) { return f.small("v", 1, 1 << 30); }

std::vector<plan::MachineShare> readRuns(Fields& f) {
  std::vector<plan::MachineShare> layout;
  for (const std::string& run : f.lines("runs", kMaxRuns)) {
    long long count = 0, procs = 0;
    int used = 0;
    if (std::sscanf(run.c_str(), "%lld %lld%n", &count, &procs, &used) != 2 ||
        run.size() <= static_cast<size_t>(used) || run[static_cast<size_t>(used)] != ' ' ||
        run.size() - static_cast<size_t>(used) - 1 > kMaxRoleText || count < 1 || procs < 1 || procs > kMaxWorkers ||
        count > kMaxMachines - static_cast<long long>(layout.size())) {
      throw Bad(fmt::format("field 'runs': '{}' is not COUNT PROCS ROLE", shown(run)));
    }
    layout.insert(layout.end(), static_cast<size_t>(count),
                  plan::MachineShare{static_cast<int>(procs), run.substr(static_cast<size_t>(used) + 1)});
  }
  if (layout.empty()) throw Bad("field 'runs': no machine");
  return layout;
}

Message read(Fields& f, const std::string& t) {
  if (t == "join") {
    Join m{version(f),
           f.small("machine", -1, kMaxMachines),
           f.text("host"),
           f.small("pid", 0, kMaxPid),
           f.small("machines", 1, kMaxMachines),
           f.small("min_machines", 1, kMaxMachines),
           f.integer("world", 0, kMaxMachines * kMaxWorkers),
           f.text("token"),
           f.small("procs", 1, kMaxWorkers),
           f.text("role")};
    if (m.role.size() > kMaxRoleText) throw Bad(fmt::format("field 'role': longer than {} bytes", kMaxRoleText));
    return m;
  }
  if (t == "start")
    return Start{version(f),  f.small("port", 1, 65535),      f.small("machine", 0, kMaxMachines),
                 readRuns(f), f.small("round", 0, kMaxRound), f.small("restarts", 0, kMaxRound)};
  if (t == "refuse") return Refuse{version(f), f.text("message"), f.text("hint")};
  if (t == "stop") return Stop{f.small("round", 0, kMaxRound), f.text("why")};
  if (t == "restart") {
    return Restart{f.small("round", 1, kMaxRound),
                   f.small("port", 0, 65535),
                   readOptionalFailure(f),
                   f.small("restarts", 0, kMaxRound),
                   f.text("why"),
                   f.small("machine", 0, kMaxMachines),
                   readRuns(f)};
  }
  if (t == "end")
    return End{f.small("code", 0, 255), f.small("signal", 0, 64), f.text("message"), f.text("hint"),
               readOptionalFailure(f)};
  if (t == "failed") return Failed{readFailure(f.object("failure", false)), f.flag("replaces")};
  if (t == "interrupted") return Interrupted{f.small("signal", 1, 64)};
  if (t == "ended") return Ended{f.small("round", 0, kMaxRound), f.flag("ok"), f.integer("saved", -1, kMaxStep)};
  if (t == "hb") return Heartbeat{};
  if (t == "ask") return Ask{f.integer("id", 0, kMaxId), f.small("rank", 0, kMaxRank)};
  if (t == "tell") return Tell{f.integer("id", 0, kMaxId), f.text("text")};
  if (t == "hold") return Hold{f.flag("stopped"), f.small("machine", 0, kMaxMachines)};
  if (t == "pg") return Progress{};
  if (auto m = readFlight(f, t)) return *m;
  if (auto m = readWatch(f, t)) return *m;
  throw Bad(fmt::format("unknown message kind '{}'", shown(t)));
}

// The line as a JSON object, bounded in size and nesting before anything else is looked at.
json parseBounded(std::string_view line) {
  if (line.size() > kMaxLine) throw Bad(fmt::format("a line of {} bytes (at most {})", line.size(), kMaxLine));
  auto depth_limit = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) throw Bad(fmt::format("nested deeper than {} levels", kMaxDepth));
    return true;
  };
  json j;
  try {
    j = json::parse(line.begin(), line.end(), depth_limit);
  } catch (const json::parse_error& e) {
    throw Bad(fmt::format("not JSON (at byte {})", e.byte));
  } catch (const json::exception&) {
    throw Bad("not JSON");
  }
  if (!j.is_object()) throw Bad(fmt::format("a JSON {}, not an object", j.type_name()));
  return j;
}

std::string kindOf(const json& j) {
  auto it = j.find("t");
  if (it == j.end() || !it->is_string()) throw Bad("field 't' (the message's kind) is missing or not a string");
  return it->get<std::string>();
}

}  // namespace codec

using namespace codec;

std::string encode(const Message& message) {
  // A log chunk is the channel's bulk: written directly, its base64 needing no escapes, the
  // same line toJson(LogsSent) would make.
  if (const auto* logs = std::get_if<LogsSent>(&message)) return logsLine(*logs);
  return std::visit([](const auto& m) { return toJson(m); }, message)
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Message> decode(std::string_view line, std::string& error) {
  try {
    const json j = parseBounded(line);
    const std::string t = kindOf(j);
    Fields fields(j, "");
    Message m = read(fields, t);
    fields.done();
    return m;
  } catch (const Bad& e) {
    error = e.what();
    return std::nullopt;
  }
}

namespace {

int versionField(const json& j) {
  auto v = j.find("v");
  if (v == j.end()) return 1;
  if (!v->is_number_integer() || v->get<long long>() < 1 || v->get<long long>() > (1 << 30))
    throw Bad("field 'v' is not a version");
  return v->get<int>();
}

}  // namespace

int versionOf(std::string_view line) {
  try {
    const json j = parseBounded(line);
    const std::string t = kindOf(j);
    return t == "join" || t == "start" || t == "refuse" ? versionField(j) : 0;
  } catch (const Bad&) {
    return 0;
  }
}

std::optional<Hello> readHello(std::string_view line, std::string& error) {
  try {
    const json j = parseBounded(line);
    if (kindOf(j) != "join") throw Bad(fmt::format("the first line is a '{}', not a join", shown(kindOf(j))));
    Hello h;
    auto token = j.find("token");
    if (token == j.end() || !token->is_string()) throw Bad("field 'token' is missing or not a string");
    h.token = token->get<std::string>();
    try {
      h.version = versionField(j);  // judged only once the caller found the token right (hub_door.cc)
    } catch (const Bad&) {
      h.version = 0;
    }
    auto host = j.find("host");
    h.host = host != j.end() && host->is_string() ? clamp(host->get<std::string>(), 255) : "?";
    return h;
  } catch (const Bad& e) {
    error = e.what();
    return std::nullopt;
  }
}

bool sameToken(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

const char* kindName(const Message& message) {
  static constexpr const char* kNames[] = {"join",        "start", "refuse", "stop", "restart", "end",  "failed",
                                           "interrupted", "ended", "hb",     "ask",  "tell",    "hold", "pg",
                                           "sw",          "sp",    "sd",     "ar",   "ck",      "ce",   "ev",
                                           "st",          "sq",    "sa",     "lg"};
  static_assert(std::size(kNames) == std::variant_size_v<Message>);
  return kNames[message.index()];
}

}  // namespace accel::launch::job
