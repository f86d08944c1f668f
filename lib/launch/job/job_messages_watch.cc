// SPDX-License-Identifier: Apache-2.0
// The messages that let machine 0 watch the whole job (job_messages.h): the other machines'
// events and statuses, and the job's view asked for from another machine.
#include <algorithm>

#include <fmt/format.h>

#include "lib/common/base64.h"
#include "lib/launch/job/message_codec.h"

namespace accel::launch::job::codec {

json toJson(const EventSent& m) {
  // An event is one JSON object; one that is not, or too long, is not sent as something else.
  const bool fits = m.line.size() <= kMaxEventLine && !m.line.empty() && m.line.front() == '{';
  return {{"t", "ev"}, {"line", fits ? clamp(m.line, kMaxEventLine) : std::string("{}")}};
}

namespace {

// JSON text, one object: what does not fit is sent as an empty object, never cut.
std::string objectText(const std::string& text) {
  return text.size() <= kMaxStatusText && !text.empty() && text.front() == '{' ? text : std::string("{}");
}

std::string readObjectText(Fields& f, const char* key) {
  std::string text = f.text(key, kMaxStatusText);
  if (text.empty() || text.front() != '{') throw Bad(fmt::format("field '{}': not a JSON object", key));
  return text;
}

}  // namespace

json toJson(const StatusSent& m) { return {{"t", "st"}, {"json", objectText(m.json)}}; }
json toJson(const StatusAsked& m) { return {{"t", "sq"}, {"id", m.id}}; }
json toJson(const StatusAnswer& m) { return {{"t", "sa"}, {"id", m.id}, {"json", objectText(m.json)}}; }

json toJson(const LogsSent& m) { return json::parse(logsLine(m)); }

std::string logsLine(const LogsSent& m) {
  const LogChunk& c = m.chunk;
  const std::string data = base64Encode(c.data.size() <= kMaxLogChunk ? c.data : c.data.substr(0, kMaxLogChunk));
  std::string line = fmt::format(R"({{"t":"lg","round":{},"local":{},"stream":{},"dropped":{},"data":")", c.round,
                                 c.local_rank, c.stream, std::max(0LL, c.dropped));
  line.reserve(line.size() + data.size() + 2);
  line += data;
  line += "\"}";
  return line;
}

LogsSent readLogs(Fields& f) {
  LogsSent m;
  LogChunk& c = m.chunk;
  c.round = f.small("round", 0, 1000000);
  c.local_rank = f.small("local", 0, 4095);
  c.stream = f.small("stream", 1, 2);
  const auto data = base64Decode(f.text("data", kMaxLogChunk / 3 * 4 + 4));
  if (!data || data->size() > kMaxLogChunk) throw Bad("field 'data': not base64 of at most 64 KiB");
  c.data = *data;
  c.dropped = f.integer("dropped", 0, kMaxId);
  return m;
}

std::optional<Message> readWatch(Fields& f, const std::string& t) {
  if (t == "lg") return readLogs(f);
  if (t == "st") return StatusSent{readObjectText(f, "json")};
  if (t == "sq") return StatusAsked{f.integer("id", 0, kMaxId)};
  if (t == "sa") return StatusAnswer{f.integer("id", 0, kMaxId), readObjectText(f, "json")};
  if (t != "ev") return std::nullopt;
  EventSent m{f.text("line", kMaxEventLine)};
  if (m.line.empty() || m.line.front() != '{' || m.line.find('\n') != std::string::npos) {
    throw Bad("field 'line': not one JSON object on one line");
  }
  return m;
}

}  // namespace accel::launch::job::codec
