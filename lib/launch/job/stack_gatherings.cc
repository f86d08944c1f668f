// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/stack_gatherings.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/common/utf8.h"

namespace accel::launch::job {

long long StackGatherings::start(const std::vector<Owed>& machines, std::chrono::milliseconds wait, int asker,
                                 long long asker_id, std::string why) {
  const long long id = next_id_++;
  Gathering& g = running_[id];
  for (const Owed& m : machines) g.owed[m.machine] = m.host;
  g.started = Clock::now();
  g.deadline = g.started + wait;
  g.out.asker = asker;
  g.out.asker_id = asker_id;
  g.out.stacks.why = std::move(why);
  g.out.stacks.machines = static_cast<int>(machines.size());
  return id;
}

void StackGatherings::part(long long id, int machine, const stacks::RankStack& piece) {
  auto it = running_.find(id);
  if (it == running_.end() || !it->second.owed.count(machine)) return;  // late, or from a stranger
  stacks::RankStack& s = it->second.ranks[{machine, piece.rank}];
  std::string text = std::move(s.text), flight = std::move(s.flight);
  if (text.size() < kMaxStackText) text += piece.text;  // past it, the rest was cut already
  if (text.size() > kMaxStackText) text = std::string(utf8Prefix(text, kMaxStackText)) + "\n... (cut)\n";
  if (flight.size() < kMaxFlightText) flight += piece.flight;
  s = piece;
  s.machine = machine;
  s.text = std::move(text);
  s.flight = std::move(flight);
}

void StackGatherings::done(long long id, int machine) {
  auto it = running_.find(id);
  if (it != running_.end()) it->second.owed.erase(machine);
}

void StackGatherings::lost(int machine) {
  for (auto& [id, g] : running_) {
    auto owed = g.owed.find(machine);
    if (owed == g.owed.end()) continue;
    g.out.stacks.notes.push_back(
        fmt::format("machine {} ({}) was lost before it sent its stacks", machine, owed->second));
    g.owed.erase(owed);
  }
}

stacks::GatheredStacks StackGatherings::result(Gathering& g) const {
  stacks::GatheredStacks out = std::move(g.out.stacks);
  const double waited = std::chrono::duration<double>(g.deadline - g.started).count();
  for (const auto& [machine, host] : g.owed) {
    out.notes.push_back(fmt::format("machine {} ({}) sent no stacks within {:g} s", machine, host, waited));
  }
  for (auto& [key, stack] : g.ranks) out.ranks.push_back(std::move(stack));
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const stacks::RankStack& a, const stacks::RankStack& b) { return a.rank < b.rank; });
  out.seconds = std::chrono::duration<double>(Clock::now() - g.started).count();
  return out;
}

std::vector<StackGatherings::Finished> StackGatherings::finished() {
  std::vector<Finished> out;
  const auto now = Clock::now();
  for (auto it = running_.begin(); it != running_.end();) {
    Gathering& g = it->second;
    if (!g.owed.empty() && now < g.deadline) {
      ++it;
      continue;
    }
    Finished f = g.out;
    f.stacks = result(g);
    out.push_back(std::move(f));
    it = running_.erase(it);
  }
  return out;
}

int StackGatherings::timeoutMs() const {
  int soonest = -1;
  const auto now = Clock::now();
  for (const auto& [id, g] : running_) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(g.deadline - now).count();
    const int due = g.owed.empty() ? 0 : static_cast<int>(std::max<long long>(0, left));
    soonest = soonest < 0 ? due : std::min(soonest, due);
  }
  return soonest;
}

bool StackGatherings::stopping() const {
  return std::any_of(running_.begin(), running_.end(), [](const auto& g) { return !g.second.out.stacks.why.empty(); });
}

void RelayedStacks::part(const job::StackPart& p) {
  auto& ranks = arriving_[p.id].ranks;
  if (!ranks.empty() && ranks.back().rank == p.rank && ranks.back().machine == p.machine) {
    if (ranks.back().text.size() < kMaxStackText) ranks.back().text += p.text;
    if (ranks.back().flight.size() < kMaxFlightText) ranks.back().flight += p.flight;
  } else {
    ranks.push_back(stackPiece(p));
  }
}

stacks::GatheredStacks RelayedStacks::done(const job::StacksDone& d) {
  stacks::GatheredStacks g = std::move(arriving_[d.id]);
  arriving_.erase(d.id);
  for (const std::string& note : split(d.note, ';')) {
    if (!trim(note).empty()) g.notes.push_back(trim(note));
  }
  std::set<int> machines;
  for (const auto& s : g.ranks) machines.insert(s.machine);
  g.machines = static_cast<int>(std::max<size_t>(1, machines.size()));
  return g;
}

std::vector<job::StackPart> stackParts(long long id, const stacks::RankStack& s) {
  // Parts whose text and flight record have at most job::kMaxText bytes each, cut between UTF-8
  // characters (a flight record is ASCII but for its groups' labels).
  constexpr size_t kPiece = job::kMaxText - 8;
  std::vector<job::StackPart> parts;
  const std::string text = validUtf8(s.text.size() <= kMaxStackText ? s.text : s.text.substr(0, kMaxStackText));
  const std::string flight = validUtf8(s.flight.size() <= kMaxFlightText ? s.flight : "");
  std::string_view rest = text, rest_flight = flight;
  do {
    const std::string_view piece = utf8Prefix(rest, kPiece), flight_piece = utf8Prefix(rest_flight, kPiece);
    parts.push_back({id, s.machine, s.host, s.rank, static_cast<int>(s.pid), s.tool, s.summary, s.problem,
                     std::string(piece), std::string(flight_piece)});
    rest.remove_prefix(piece.size());
    rest_flight.remove_prefix(flight_piece.size());
  } while (!rest.empty() || !rest_flight.empty());
  return parts;
}

stacks::RankStack stackPiece(const job::StackPart& p) {
  stacks::RankStack s;
  s.rank = p.rank;
  s.pid = p.pid;
  s.machine = p.machine;
  s.host = p.host;
  s.tool = p.tool;
  s.summary = p.summary;
  s.problem = p.problem;
  s.text = p.text;
  s.flight = p.flight;
  return s;
}

}  // namespace accel::launch::job
