// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/flight/flight_verdict.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "lib/common/call_names.h"
#include "lib/common/cpu_list.h"

namespace accel::launch::flight {

namespace {

using accel::flight::Call;
using accel::flight::State;

// One rank's calls in one group, by sequence number.
struct Member {
  const RankRecord* rank;
  std::map<uint64_t, const Call*> calls;
};

std::string ranksText(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", cpuListText(ranks));
}

std::string describe(const Call& c) { return fmt::format("{} #{}", callDescription(c), c.seq); }

auto shape(const Call& c) { return std::make_tuple(c.kind, c.dtype, c.count, c.op, c.root, c.name); }

uint64_t lastCompleted(const Member& m) {
  for (auto it = m.calls.rbegin(); it != m.calls.rend(); ++it) {
    if (it->second->state == State::Completed) return it->first;
  }
  return 0;
}

uint64_t lastSeen(const Member& m) { return m.calls.empty() ? 0 : m.calls.rbegin()->first; }

// Every group's members: the ranks whose record names the group.
std::map<unsigned, std::vector<Member>> groupsOf(const std::vector<RankRecord>& ranks) {
  std::map<unsigned, std::vector<Member>> groups;
  for (const RankRecord& r : ranks) {
    if (!r.flight) continue;
    const auto& dump = r.flight->dump;
    for (unsigned g = 0; g < dump.groups.size(); ++g) {
      if (dump.groups[g].rank >= 0) groups[g].push_back({&r, {}});  // not a group it is outside of
    }
  }
  for (auto& [g, members] : groups) {
    for (Member& m : members) {
      for (const Call& c : m.rank->flight->dump.calls) {
        if (c.group == g) m.calls[c.seq] = &c;
      }
    }
  }
  return groups;
}

// "rank 7 (host b, pid 4242) never did: its last was …", those with the same last call together.
std::string neverText(const std::vector<const Member*>& never) {
  std::map<std::string, std::vector<const Member*>> by_last;
  for (const Member* m : never) {
    by_last[m->calls.empty() ? "" : describe(*m->calls.rbegin()->second)].push_back(m);
  }
  std::vector<std::string> parts;
  for (const auto& [last, members] : by_last) {
    std::vector<int> ranks;
    for (const Member* m : members) ranks.push_back(m->rank->rank);
    const Member& first = *members.front();
    const bool one = members.size() == 1;
    const std::string where = one ? fmt::format(" (host {}, pid {})", first.rank->host, first.rank->pid) : "";
    parts.push_back(fmt::format("{}{} never did: {} last was {}", ranksText(ranks), where, one ? "its" : "their",
                                last.empty() ? "none in this group" : last));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

struct Parting {
  double age = 0;  // seconds since the first member entered the call
  std::string line;
  std::vector<int> stuck;
};

std::optional<Parting> partingIn(unsigned group, const std::vector<Member>& members) {
  uint64_t done = UINT64_MAX, last = 0;
  for (const Member& m : members) {
    done = std::min(done, lastCompleted(m));
    last = std::max(last, lastSeen(m));
  }
  if (members.empty() || last <= done) return std::nullopt;
  const uint64_t seq = done + 1;
  std::vector<int> entered;
  std::vector<const Member*> never;
  const Call* call = nullptr;
  double age = 0;
  for (const Member& m : members) {
    auto it = m.calls.find(seq);
    if (it == m.calls.end()) {
      never.push_back(&m);
      continue;
    }
    const Call& c = *it->second;
    entered.push_back(m.rank->rank);
    call = call ? call : &c;
    const int64_t since = c.started_ns ? c.started_ns : c.enqueued_ns;
    age = std::max(age, static_cast<double>(m.rank->flight->read_ns - since) / 1e9);
  }
  if (!call) return std::nullopt;  // the members' records no longer reach that far back
  Parting p;
  p.age = age;
  p.line = fmt::format("{} of group {}: {} entered it {:.1f} s ago", describe(*call), group, ranksText(entered), age);
  if (never.empty()) {
    p.line += "; none of them has completed it";
  } else {
    p.line += "; " + neverText(never);
    for (const Member* m : never) p.stuck.push_back(m->rank->rank);
  }
  return p;
}

// The first place of a group's sequence where members' calls differ, as a line; "" for none.
std::string mismatchIn(unsigned group, const std::vector<Member>& members) {
  std::map<uint64_t, std::map<decltype(shape(Call{})), std::vector<int>>> places;
  std::map<decltype(shape(Call{})), const Call*> example;
  for (const Member& m : members) {
    for (const auto& [seq, c] : m.calls) {
      places[seq][shape(*c)].push_back(m.rank->rank);
      example.emplace(shape(*c), c);
    }
  }
  for (const auto& [seq, shapes] : places) {
    if (shapes.size() < 2) continue;
    std::vector<std::string> parts;
    for (const auto& [s, ranks] : shapes) {
      const Call& c = *example.at(s);
      parts.push_back(fmt::format("{} called {}", ranksText(ranks), callDescription(c)));
    }
    return fmt::format("the ranks' calls #{} of group {} differ: {}", seq, group, fmt::join(parts, ", "));
  }
  return "";
}

}  // namespace

std::string callDescription(const Call& c) {
  if (c.name.empty()) return calls::describeCall(c.kind, c.dtype, c.count, c.op, c.root);
  return fmt::format("{} ({} x {})", c.name, calls::dtypeName(c.dtype), c.count);
}

FlightVerdict judgeFlights(const std::vector<RankRecord>& ranks) {
  FlightVerdict v;
  for (const RankRecord& r : ranks) {
    if (!r.flight) v.notes.push_back(fmt::format("no flight record from rank {}: {}", r.rank, r.missing));
  }
  const auto groups = groupsOf(ranks);
  std::optional<Parting> first;
  for (const auto& [g, members] : groups) {
    if (v.mismatch.empty()) v.mismatch = mismatchIn(g, members);
    auto p = partingIn(g, members);
    if (p && (!first || p->age > first->age)) first = std::move(p);
  }
  if (first) {
    v.line = first->line;
    v.stuck = first->stuck;
  }
  return v;
}

}  // namespace accel::launch::flight
