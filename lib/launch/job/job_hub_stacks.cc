// SPDX-License-Identifier: Apache-2.0
// Machine 0's share of every rank's stack (job_link.h): gatherings from every machine still heard,
// for `accel stacks` on any machine and before the job stops for a hang, a lost machine or a
// collective's timeout; and --hang_timeout itself.
#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/strings.h"
#include "lib/launch/job/job_hub.h"

namespace accel::launch::job {

void JobHub::gather(int asker, long long asker_id, const std::string& why, double seconds) {
  std::vector<StackGatherings::Owed> owed = {{0, plan_.host}};
  for (const auto& [k, m] : members_) {
    if (!m.lost && m.conn->open()) owed.push_back({k, m.who.host});
  }
  const auto wait = defaults::fromSeconds(seconds + defaults::kStacksSlackSeconds);
  const long long id = gatherings_.start(owed, wait, asker, asker_id, why);
  const std::string line = job::encode(job::StacksWanted{id, seconds});
  for (auto& [k, m] : members_) {
    if (!m.lost && m.conn->open()) m.conn->send(line);
  }
  queued_.push_back(JobEvent::collect(id, seconds));
}

// Once a round: the stop waits for the stacks, unless they are off or the job stops already.
void JobHub::stopAfterStacks(const std::string& why) {
  if (stopping_ || gatherings_.stopping()) return;
  if (plan_.stacks_timeout <= 0) return stopAll(why);
  gather(0, 0, why, plan_.stacks_timeout);
}

void JobHub::stacksCollected(long long id, const std::vector<stacks::RankStack>& stacks) {
  for (stacks::RankStack s : stacks) {
    s.host = plan_.host;
    gatherings_.part(id, 0, s);
  }
  gatherings_.done(id, 0);
}

// A member's: its own question (sw), or its share of a gathering (sp, sd: the machine is the
// connection's, whatever the part says).
void JobHub::onStacksMessage(int machine, const job::Message& message) {
  if (auto* w = std::get_if<job::StacksWanted>(&message)) return gather(machine, w->id, "", w->seconds);
  if (auto* p = std::get_if<job::StackPart>(&message)) {
    stacks::RankStack piece = stackPiece(*p);
    piece.host = members_.at(machine).who.host;
    return gatherings_.part(p->id, machine, piece);
  }
  if (auto* d = std::get_if<job::StacksDone>(&message)) gatherings_.done(d->id, machine);
}

// What ended goes to its asker: this launcher's supervisor (a Stacks event, then the stop it
// waited for), or the member that asked, as parts and a done of machine -1.
void JobHub::finishGatherings() {
  for (auto& f : gatherings_.finished()) {
    if (f.asker == 0) {
      const std::string why = f.stacks.why;
      queued_.push_back(JobEvent::gathered(f.asker_id, std::move(f.stacks)));
      if (!why.empty()) stopAll(why);
      continue;
    }
    auto it = members_.find(f.asker);
    if (it == members_.end() || !it->second.conn->open()) continue;
    for (const stacks::RankStack& s : f.stacks.ranks) {
      for (const auto& part : stackParts(f.asker_id, s)) it->second.conn->send(job::encode(part));
    }
    it->second.conn->send(job::encode(job::StacksDone{f.asker_id, -1, join(f.stacks.notes, "; ")}));
  }
}

void JobHub::watchForHang() {
  if (!started_ || finished_ || stopping_ || gatherings_.stopping() || !hang_.overdue()) return;
  hang_.fire();
  hung_ = hang_.why();
  stopAfterStacks(hung_);
}

}  // namespace accel::launch::job
