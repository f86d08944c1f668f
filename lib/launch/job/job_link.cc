// SPDX-License-Identifier: Apache-2.0
// The job link of a launch on one machine (SoloLink: no channel, the decisions are this
// machine's own), and the choice of link.
#include "lib/launch/job/job_link.h"

#include <utility>

#include "lib/launch/job/job_hub.h"
#include "lib/launch/job/job_member.h"
#include "lib/launch/job/job_round.h"

namespace accel {

namespace {

class SoloLink final : public JobLink {
 public:
  explicit SoloLink(int max_restarts) : max_restarts_(max_restarts) {}

  int rendezvous(int) override { return 0; }
  void addPollFds(std::vector<pollfd>&) const override {}
  int timeoutMs() const override { return queued_.empty() ? -1 : 0; }
  std::vector<JobEvent> service(const std::vector<pollfd>&) override { return std::exchange(queued_, {}); }

  void workerFailed(const WorkerFailure& failure, bool replaces) override { ledger_.add(failure, replaces, 0); }
  void interrupted(int signal) override {
    if (!signal_) signal_ = signal;
  }
  void roundEnded(int round, bool succeeded) override {
    queued_.push_back(decideRound(round, max_restarts_, {succeeded, signal_, "", "", &ledger_}));
    ledger_.clear();
  }
  // Every rank is this machine's: the supervisor answers questions about them itself.
  void ask(long long id, int rank) override {
    queued_.push_back(JobEvent::answer(id, "rank " + std::to_string(rank) + " is not one of this job's ranks"));
  }
  void tell(long long, const std::string&) override {}
  void hold(bool) override {}  // no other machine to tell

 private:
  int max_restarts_;
  FailureLedger ledger_;
  int signal_ = 0;
  std::vector<JobEvent> queued_;
};

}  // namespace

std::unique_ptr<JobLink> makeJobLink(const LaunchPlan& plan) {
  if (plan.num_machines <= 1) return std::make_unique<SoloLink>(plan.max_restarts);
  if (plan.machine_rank == 0) return std::make_unique<JobHub>(plan);
  return makeMemberLink(plan);
}

}  // namespace accel
