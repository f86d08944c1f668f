// SPDX-License-Identifier: Apache-2.0
// The messages that let machine 0 watch the whole job (job_messages.h): the other machines' events.
#include <fmt/format.h>

#include "lib/launch/job/message_codec.h"

namespace accel::launch::job::codec {

json toJson(const EventSent& m) {
  // An event is one JSON object; one that is not, or too long, is not sent as something else.
  const bool fits = m.line.size() <= kMaxEventLine && !m.line.empty() && m.line.front() == '{';
  return {{"t", "ev"}, {"line", fits ? clamp(m.line, kMaxEventLine) : std::string("{}")}};
}

std::optional<Message> readWatch(Fields& f, const std::string& t) {
  if (t != "ev") return std::nullopt;
  EventSent m{f.text("line", kMaxEventLine)};
  if (m.line.empty() || m.line.front() != '{' || m.line.find('\n') != std::string::npos) {
    throw Bad("field 'line': not one JSON object on one line");
  }
  return m;
}

}  // namespace accel::launch::job::codec
