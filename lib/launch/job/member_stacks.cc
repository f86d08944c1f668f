// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/member_stacks.h"

#include "lib/common/defaults.h"

namespace accel::launch::job {

std::optional<JobEvent> MemberStacks::fromHub(const job::Message& m) {
  if (auto* w = std::get_if<job::StacksWanted>(&m)) {
    owed_.insert(w->id);
    return JobEvent::collect(w->id, w->seconds);
  }
  if (auto* p = std::get_if<job::StackPart>(&m)) {
    relayed_.part(*p);
    return std::nullopt;
  }
  const auto& d = std::get<job::StacksDone>(m);
  return JobEvent::gathered(d.id, relayed_.done(d));
}

// One collection may answer both machine 0's gathering and this machine's own.
void MemberStacks::collected(long long id, const std::vector<stacks::RankStack>& stacks) {
  const int self = plan_.machine_rank;
  const bool owed = owed_.erase(id) > 0;
  for (stacks::RankStack s : stacks) {
    s.machine = self;
    s.host = plan_.host;
    if (owed) {
      for (const auto& part : stackParts(id, s)) send_(part);
    }
    own_.part(id, self, s);
  }
  if (owed) send_(job::StacksDone{id, self, ""});
  own_.done(id, self);
}

JobEvent MemberStacks::gatherOwn(JobEvent end) {
  const auto wait = defaults::fromSeconds(plan_.stacks_timeout + defaults::kStacksSlackSeconds);
  const long long id = own_.start({{plan_.machine_rank, plan_.host}}, wait, plan_.machine_rank, 0, end.message);
  held_end_ = std::move(end);
  return JobEvent::collect(id, plan_.stacks_timeout);
}

std::vector<JobEvent> MemberStacks::finished() {
  std::vector<JobEvent> out;
  for (auto& f : own_.finished()) {
    out.push_back(JobEvent::gathered(0, std::move(f.stacks)));
    if (held_end_) out.push_back(*std::exchange(held_end_, std::nullopt));
  }
  return out;
}

}  // namespace accel::launch::job
