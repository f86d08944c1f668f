// SPDX-License-Identifier: Apache-2.0
// Every rank's stack on a machine other than machine 0 (job_member.h, job_link.h): the
// collections machine 0's gatherings ask of this machine (sw, answered with parts and a done),
// the job's stacks machine 0 relays for an `accel stacks` asked here, and this machine's own
// gathering before it ends because machine 0 was lost. Single-threaded, as the member.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "lib/launch/job/job_link.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/job/stack_gatherings.h"

namespace accel::launch::job {

class MemberStacks {
 public:
  using Send = std::function<void(const job::Message&)>;
  MemberStacks(const plan::LaunchPlan& plan, Send send) : plan_(plan), send_(std::move(send)) {}

  // A sw, sp or sd from machine 0: the event it brings (a Collect, or the Stacks of a question
  // once its done arrives), if any.
  std::optional<JobEvent> fromHub(const job::Message& m);
  // This machine's stacks for a Collect: machine 0's share is sent, the own gathering's kept.
  void collected(long long id, const std::vector<stacks::RankStack>& stacks);
  // Machine 0 is lost: this machine's own gathering for `end`, which waits for it; returns the
  // Collect event to queue.
  JobEvent gatherOwn(JobEvent end);
  // The own gathering once it ended: its Stacks event, then the end it held.
  std::vector<JobEvent> finished();
  bool gathering() const { return held_end_.has_value(); }
  int timeoutMs() const { return own_.timeoutMs(); }

 private:
  const plan::LaunchPlan& plan_;
  Send send_;
  std::set<long long> owed_;  // machine 0's gatherings this machine owes
  RelayedStacks relayed_;     // the job's stacks for this machine's questions
  StackGatherings own_;       // this machine's own, before it ends
  std::optional<JobEvent> held_end_;
};

}  // namespace accel::launch::job
