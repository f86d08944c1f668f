// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/flight/flight_text.h"

#include <sstream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel::launch::flight {

namespace {

using accel::flight::Call;
using accel::flight::State;
constexpr const char* kHead = "accel-flight";

[[noreturn]] void bad(size_t line, const std::string& why) {
  throw Error(fmt::format("flight record line {}: {}", line, why));
}

std::vector<std::string> splitWords(const std::string& line) {
  std::vector<std::string> out;
  for (std::string& w : split(line, ' ')) {
    if (!w.empty()) out.push_back(std::move(w));
  }
  return out;
}

// The line's space-separated numbers, exactly `n` of them.
std::vector<long long> numbers(const std::string& line, size_t n, size_t at) {
  std::vector<long long> out;
  for (const std::string& word : splitWords(line)) {
    const auto v = parseInt(word);
    if (!v) bad(at, fmt::format("'{}' is not a number", word.substr(0, 32)));
    out.push_back(*v);
  }
  if (out.size() != n) bad(at, fmt::format("{} numbers, not {}", out.size(), n));
  return out;
}

}  // namespace

std::string encodeFlight(const RankFlight& f, size_t keep) {
  const auto& d = f.dump;
  std::string out = fmt::format("{} {} {} {} {} {} {} {} {} {}\n", kHead, accel::flight::kVersion, d.rank, d.world,
                                d.pid, d.capacity, d.written, d.torn, f.read_ns, f.realtime_offset_ns);
  out += fmt::format("groups {}\n", d.groups.size());
  for (const auto& g : d.groups) out += fmt::format("{} {} {}\n", g.size, g.rank, g.label);
  const size_t first = d.calls.size() > keep ? d.calls.size() - keep : 0;
  out += fmt::format("calls {}\n", d.calls.size() - first);
  for (size_t i = first; i < d.calls.size(); ++i) {
    const Call& c = d.calls[i];
    out +=
        fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}\n", c.group, c.seq, c.kind, c.dtype, c.op, c.root, c.count,
                    static_cast<int>(c.state), c.enqueued_ns, c.started_ns, c.ended_ns, c.name.empty() ? "-" : c.name);
  }
  return out;
}

namespace {
constexpr const char* kMissing = "accel-flight-missing ";
}  // namespace

std::string encodeMissing(const std::string& why) { return kMissing + why; }

std::optional<std::string> missingReason(const std::string& text) {
  if (text.rfind(kMissing, 0) != 0) return std::nullopt;
  return text.substr(std::string(kMissing).size());
}

RankFlight decodeFlight(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  size_t at = 0;
  auto next = [&](const char* what) {
    if (!std::getline(in, line)) bad(at + 1, fmt::format("missing: {}", what));
    return ++at;
  };
  next("the header");
  if (line.rfind(std::string(kHead) + " ", 0) != 0) bad(at, "not a flight record");
  const auto h = numbers(line.substr(std::string(kHead).size()), 9, at);
  if (h[0] != accel::flight::kVersion)
    bad(at, fmt::format("version {}, this accel reads {}", h[0], accel::flight::kVersion));
  RankFlight f;
  auto& d = f.dump;
  d.rank = static_cast<int>(h[1]);
  d.world = static_cast<int>(h[2]);
  d.pid = h[3];
  d.capacity = static_cast<uint32_t>(h[4]);
  d.written = static_cast<uint64_t>(h[5]);
  d.torn = static_cast<unsigned>(h[6]);
  f.read_ns = h[7];
  f.realtime_offset_ns = h[8];
  next("the groups");
  if (line.rfind("groups ", 0) != 0) bad(at, "expected 'groups N'");
  const long long groups = numbers(line.substr(7), 1, at)[0];
  if (groups < 0 || groups > accel::flight::kMaxGroups) bad(at, "too many groups");
  for (long long i = 0; i < groups; ++i) {
    next("a group");
    const auto words = splitWords(line);
    if (words.size() < 2) bad(at, "expected 'SIZE RANK LABEL'");
    const auto size = parseInt(words[0]), rank = parseInt(words[1]);
    if (!size || !rank) bad(at, "expected 'SIZE RANK LABEL'");
    const size_t label = line.find(' ', line.find(words[1], words[0].size()));
    d.groups.push_back(
        {label == std::string::npos ? "" : trim(line.substr(label)), static_cast<int>(*size), static_cast<int>(*rank)});
  }
  next("the calls");
  if (line.rfind("calls ", 0) != 0) bad(at, "expected 'calls N'");
  const long long calls = numbers(line.substr(6), 1, at)[0];
  if (calls < 0 || calls > 1'000'000) bad(at, "too many calls");
  for (long long i = 0; i < calls; ++i) {
    next("a call");
    const size_t last = line.rfind(' ');
    if (last == std::string::npos) bad(at, "expected 12 fields");
    const std::string name = line.substr(last + 1);
    const auto v = numbers(line.substr(0, last), 11, at);
    Call c;
    c.group = static_cast<unsigned>(v[0]);
    c.seq = static_cast<uint64_t>(v[1]);
    c.kind = static_cast<unsigned>(v[2]);
    c.dtype = static_cast<unsigned>(v[3]);
    c.op = static_cast<unsigned>(v[4]);
    c.root = static_cast<int>(v[5]);
    c.count = static_cast<uint64_t>(v[6]);
    if (v[7] < 1 || v[7] > 4) bad(at, fmt::format("state {} is none", v[7]));
    c.state = static_cast<State>(v[7]);
    c.enqueued_ns = v[8];
    c.started_ns = v[9];
    c.ended_ns = v[10];
    if (name != "-") c.name = name;
    d.calls.push_back(c);
  }
  return f;
}

}  // namespace accel::launch::flight
