// SPDX-License-Identifier: Apache-2.0
// The job link of a launch on one machine (SoloLink: no channel, the decisions are this
// machine's own), and the choice of link.
#include "lib/launch/job/job_link.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/launch/job/etcd_link.h"
#include "lib/launch/job/hang_watch.h"
#include "lib/launch/job/job_hub.h"
#include "lib/launch/job/job_member.h"
#include "lib/launch/job/job_round.h"
#include "lib/launch/job/stack_gatherings.h"

namespace accel::launch::job {

namespace {

class SoloLink final : public JobLink {
 public:
  explicit SoloLink(const plan::LaunchPlan& plan) : plan_(plan), hang_(plan.hang_timeout) {}

  int rendezvous(int) override { return 0; }
  void addPollFds(std::vector<pollfd>&) const override {}
  int timeoutMs() const override {
    if (!queued_.empty()) return 0;
    const int gathering = gatherings_.timeoutMs(), hang = hang_.timeoutMs();
    return gathering < 0 ? hang : hang < 0 ? gathering : std::min(gathering, hang);
  }
  std::vector<JobEvent> service(const std::vector<pollfd>&) override {
    if (hang_.overdue() && !stopping_) {
      hang_.fire();
      hung_ = hang_.why();
      stopAfterStacks(hung_);
    }
    finishGatherings();
    return std::exchange(queued_, {});
  }

  // A failure that reads like a collective's timeout: the stacks first (the supervisor holds its
  // stop for this link's); any other failure the supervisor stops at once.
  void workerFailed(const WorkerFailure& failure, bool replaces) override {
    ledger_.add(failure, replaces, 0);
    if (replaces) return;
    if (timedOutInCollective(failure)) return stopAfterStacks(fmt::format("{} {}", failure.who, failure.exit_text));
    stopping_ = true;
  }
  void interrupted(int signal) override {
    if (!signal_) signal_ = signal;
    stopping_ = true;
  }
  void roundEnded(int round, bool succeeded, long long saved_step) override {
    const double seconds = ledger_.empty() ? roundSeconds() : ledger_.first().seconds;
    JobEvent e = decideRound(round, round, plan_.max_restarts,
                             {succeeded, signal_, "", "", hung_, HangWatch::hint(hung_), &ledger_, seconds, saved_step},
                             policy_);
    if (e.kind == JobEvent::Kind::Restart) {
      hang_.restart();
      stopping_ = false;
      hung_.clear();
      round_started_ = std::chrono::steady_clock::now();
    }
    queued_.push_back(std::move(e));
    ledger_.clear();
  }
  // Every rank is this machine's: the supervisor answers questions about them itself.
  void ask(long long id, int rank) override {
    queued_.push_back(JobEvent::answer(id, "rank " + std::to_string(rank) + " is not one of this job's ranks"));
  }
  void tell(long long, const std::string&) override {}
  void hold(bool stopped) override { hang_.hold(stopped); }  // no other machine to tell

  void progressed() override { hang_.progress(); }
  void stacksCollected(long long id, const std::vector<stacks::RankStack>& stacks) override {
    for (stacks::RankStack s : stacks) {
      s.host = plan_.host;
      gatherings_.part(id, 0, s);
    }
    gatherings_.done(id, 0);
  }
  void wantStacks(long long id, double seconds) override { gather(id, "", seconds); }

 private:
  const plan::LaunchPlan& plan_;
  FailureLedger ledger_;
  int signal_ = 0;
  std::vector<JobEvent> queued_;
  HangWatch hang_;
  std::string hung_;
  RestartPolicy policy_{rulesOf(plan_)};
  std::chrono::steady_clock::time_point round_started_ = std::chrono::steady_clock::now();
  double roundSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - round_started_).count();
  }
  bool stopping_ = false;
  StackGatherings gatherings_;

  void gather(long long asker_id, std::string why, double seconds) {
    const auto wait = defaults::fromSeconds(seconds + defaults::kStacksSlackSeconds);
    const long long id = gatherings_.start({{0, plan_.host}}, wait, 0, asker_id, std::move(why));
    queued_.push_back(JobEvent::collect(id, seconds));
  }

  // Stops the job once every rank's stack is read (at once where the stacks are off).
  void stopAfterStacks(const std::string& why) {
    if (std::exchange(stopping_, true)) return;
    if (plan_.stacks_timeout > 0) return gather(0, why, plan_.stacks_timeout);
    queued_.push_back(JobEvent::stop(0, why));
  }

  void finishGatherings() {
    for (auto& f : gatherings_.finished()) {
      const std::string why = f.stacks.why;
      queued_.push_back(JobEvent::gathered(f.asker_id, std::move(f.stacks)));
      if (f.asker_id == 0) queued_.push_back(JobEvent::stop(0, why));
    }
  }
};

}  // namespace

std::unique_ptr<JobLink> makeJobLink(const plan::LaunchPlan& plan) {
  if (plan.etcd) return makeEtcdLink(plan);
  if (plan.num_machines <= 1) return std::make_unique<SoloLink>(plan);
  if (plan.machine_rank == 0) return std::make_unique<JobHub>(plan);
  return makeMemberLink(plan);
}

}  // namespace accel::launch::job
