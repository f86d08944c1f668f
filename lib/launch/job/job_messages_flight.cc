// SPDX-License-Identifier: Apache-2.0
// The stack, arrival and clock messages of the job channel (job_messages.h).
#include <algorithm>

#include <fmt/format.h>

#include "lib/launch/job/message_codec.h"

namespace accel::launch::job::codec {

json toJson(const StacksWanted& m) { return {{"t", "sw"}, {"id", m.id}, {"seconds", m.seconds}}; }
json toJson(const StackPart& m) {
  return {{"t", "sp"},
          {"id", m.id},
          {"machine", m.machine},
          {"host", clamp(m.host, kMaxText)},
          {"rank", m.rank},
          {"pid", m.pid},
          {"tool", clamp(m.tool, kMaxText)},
          {"summary", clamp(m.summary, kMaxText)},
          {"problem", clamp(m.problem, kMaxText)},
          {"text", clamp(m.text, kMaxText)},
          {"flight", clamp(m.flight, kMaxText)}};
}
json toJson(const StacksDone& m) {
  return {{"t", "sd"}, {"id", m.id}, {"machine", m.machine}, {"note", clamp(m.note, kMaxText)}};
}
// Ranks as "rank pid" pairs, calls as "rank seq time" triples, each time after the batch's earliest.
json toJson(const ArrivalsSent& m) {
  const auto& a = m.arrivals;
  json ranks = json::array(), calls = json::array();
  for (size_t i = 0; i < a.ranks.size() && i < static_cast<size_t>(kMaxWorkers); ++i) {
    ranks.push_back(a.ranks[i].rank);
    ranks.push_back(a.ranks[i].pid);
  }
  const size_t n = std::min(a.calls.size(), kMaxArrivals);
  int64_t base = n ? a.calls[0].ns : 0;
  for (size_t i = 0; i < n; ++i) base = std::min(base, a.calls[i].ns);
  for (size_t i = 0; i < n; ++i) {
    calls.push_back(a.calls[i].rank);
    calls.push_back(std::min<uint64_t>(a.calls[i].seq, kMaxId));
    calls.push_back(std::min<int64_t>(a.calls[i].ns - base, kMaxId));
  }
  return {{"t", "ar"},      {"round", a.round}, {"host", clamp(a.host, kMaxText)},
          {"ranks", ranks}, {"base", base},     {"calls", calls}};
}
json toJson(const ClockProbe& m) { return {{"t", "ck"}, {"id", m.id}}; }
json toJson(const ClockEcho& m) { return {{"t", "ce"}, {"id", m.id}, {"ns", m.ns}}; }

namespace {

ArrivalsSent readArrivals(Fields& f) {
  ArrivalsSent m;
  flight::Arrivals& a = m.arrivals;
  a.round = f.small("round", 0, kMaxRound);
  a.host = f.text("host");
  const auto ranks = f.integers("ranks", 2 * kMaxWorkers, 0, kMaxPid);
  const long long base = f.integer("base", -kMaxClock, kMaxClock);
  const auto calls = f.integers("calls", 3 * kMaxArrivals, 0, kMaxId);
  if (ranks.size() % 2) throw Bad("field 'ranks': not rank and pid pairs");
  if (calls.size() % 3) throw Bad("field 'calls': not rank, sequence number and time triples");
  for (size_t i = 0; i < ranks.size(); i += 2) {
    // Ranks within int (kMaxPid's range): the judge counts them as ints.
    a.ranks.push_back({static_cast<int>(ranks[i]), ranks[i + 1]});
  }
  for (size_t i = 0; i < calls.size(); i += 3) {
    if (calls[i] > kMaxPid || calls[i + 2] > kMaxClock - base) throw Bad("field 'calls': a rank or time out of range");
    a.calls.push_back({static_cast<int>(calls[i]), static_cast<uint64_t>(calls[i + 1]), base + calls[i + 2]});
  }
  return m;
}

}  // namespace

std::optional<Message> readFlight(Fields& f, const std::string& t) {
  if (t == "sw") {
    StacksWanted m{f.integer("id", 0, kMaxId), f.seconds("seconds")};
    if (m.seconds <= 0 || m.seconds > kMaxStackSeconds) throw Bad("field 'seconds': not in (0, 600]");
    return m;
  }
  if (t == "sp") {
    return StackPart{f.integer("id", 0, kMaxId),
                     f.small("machine", 0, kMaxMachines),
                     f.text("host"),
                     f.small("rank", 0, kMaxRank),
                     f.small("pid", 0, kMaxPid),
                     f.text("tool"),
                     f.text("summary"),
                     f.text("problem"),
                     f.text("text"),
                     f.text("flight")};
  }
  if (t == "sd") return StacksDone{f.integer("id", 0, kMaxId), f.small("machine", -1, kMaxMachines), f.text("note")};
  if (t == "ar") return readArrivals(f);
  if (t == "ck") return ClockProbe{f.integer("id", 0, kMaxId)};
  if (t == "ce") return ClockEcho{f.integer("id", 0, kMaxId), f.integer("ns", -kMaxClock, kMaxClock)};
  return std::nullopt;
}

}  // namespace accel::launch::job::codec
