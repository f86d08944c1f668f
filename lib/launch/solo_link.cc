// SPDX-License-Identifier: Apache-2.0
// The job link of a launch on one machine: no channel, the decisions are this machine's own.
#include <utility>

#include "lib/launch/job_wire.h"

namespace accel {

std::unique_ptr<JobLink> makeHubLink(const LaunchPlan& plan);     // job_hub.cc
std::unique_ptr<JobLink> makeMemberLink(const LaunchPlan& plan);  // job_member.cc

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

 private:
  int max_restarts_;
  FailureLedger ledger_;
  int signal_ = 0;
  std::vector<JobEvent> queued_;
};

}  // namespace

std::unique_ptr<JobLink> makeJobLink(const LaunchPlan& plan) {
  if (plan.num_machines <= 1) return std::make_unique<SoloLink>(plan.max_restarts);
  return plan.machine_rank == 0 ? makeHubLink(plan) : makeMemberLink(plan);
}

}  // namespace accel
