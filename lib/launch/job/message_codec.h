// SPDX-License-Identifier: Apache-2.0
// The job channel's codec (job_messages.h) in one file per family of messages, sharing what every
// family needs: the bounds, the clamping of what is written, and the typed reading of fields.
// Internal to lib/launch/job.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/json_fields.h"
#include "lib/launch/job/job_messages.h"

namespace accel::launch::job::codec {

using nlohmann::json;
using Bad = FieldError;

constexpr long long kMaxRound = 1000000;
constexpr long long kMaxStep = 1LL << 62;    // a checkpoint's step
constexpr long long kMaxMachines = 1 << 20;  // the store's largest world (plan/launch_checks.cc)
constexpr long long kMaxPid = std::numeric_limits<int>::max();
constexpr long long kMaxId = 1LL << 53;                                   // exact in every JSON reader
constexpr long long kMaxWorkers = 4096;                                   // one launcher's workers (launch_checks.h)
constexpr long long kMaxClock = std::numeric_limits<int64_t>::max() / 2;  // a monotonic clock's nanoseconds

// Valid UTF-8 first (JSON's strings are: a worker may print any bytes), then cut to `max`.
std::string clamp(const std::string& text, size_t max);
json clampLines(const std::vector<std::string>& lines);
// A stranger's text as a note may show it: at most 40 bytes, nothing a terminal would obey.
std::string shown(const std::string& text);

class Fields : public JsonFields {
 public:
  Fields(const json& j, std::string where) : JsonFields(j, std::move(where), kMaxText) {}
  std::vector<std::string> lines(const char* key, size_t max = kMaxLines) {
    return JsonFields::lines(key, max, kMaxLineText);
  }
};

// The stack, arrival and clock messages (job_messages_flight.cc).
json toJson(const StacksWanted& m);
json toJson(const StackPart& m);
json toJson(const StacksDone& m);
json toJson(const ArrivalsSent& m);
json toJson(const ClockProbe& m);
json toJson(const ClockEcho& m);
std::optional<Message> readFlight(Fields& f, const std::string& t);  // nullopt: another family's kind

// The watching messages (job_messages_watch.cc).
json toJson(const EventSent& m);
json toJson(const StatusSent& m);
json toJson(const StatusAsked& m);
json toJson(const StatusAnswer& m);
json toJson(const LogsSent& m);
std::string logsLine(const LogsSent& m);
std::optional<Message> readWatch(Fields& f, const std::string& t);

}  // namespace accel::launch::job::codec
