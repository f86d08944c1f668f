// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/etcd_link.h"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/process/signal_channel.h"
#include "lib/common/socket.h"
#include "lib/common/write_fully.h"
#include "lib/launch/etcd/etcd_client.h"
#include "lib/launch/etcd/lease_keeper.h"
#include "lib/launch/job/etcd_records.h"
#include "lib/launch/job/job_hub.h"
#include "lib/launch/job/job_member.h"
#include "lib/launch/plan/plan_layout.h"

namespace accel::launch::job {

namespace {

using Clock = std::chrono::steady_clock;

class EtcdLink final : public JobLink {
 public:
  explicit EtcdLink(const plan::LaunchPlan& plan)
      : plan_(plan), etcd_(*plan.etcd), records_(etcd_, *plan.etcd, plan.run_id) {}

  ~EtcdLink() override {
    keeper_.reset();
    try {
      if (lease_) etcd_.revoke(lease_);  // this machine's keys go now, not at the lease's end
    } catch (const Error&) {
    }
  }

  int rendezvous(int signal_fd) override {
    signal_fd_ = signal_fd;
    const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
    if (int signal = records_.reach(deadline, signal_fd)) return 128 + signal;
    ttl_ = std::max<long long>(2, std::llround(std::ceil(plan_.heartbeat_timeout)));
    lease_ = etcd_.grantLease(ttl_);
    keeper_ = std::make_unique<etcd::LeaseKeeper>(*plan_.etcd, lease_, ttl_);
    records_.enter(lease_, plan_.host);
    if (auto verdict = join(deadline)) {
      if (verdict->signal) return 128 + verdict->signal;
      throw Error(verdict->message, verdict->hint);
    }
    return 0;
  }

  int firstPort() const override { return hub_ ? hub_->roundPort() : inner_->firstPort(); }

  std::optional<Layout> layout() const override {
    auto l = inner_ ? inner_->layout() : std::nullopt;
    if (l) l->master_addr = hub_address_.host;
    return l;
  }

  void addPollFds(std::vector<pollfd>& fds) const override { inner_->addPollFds(fds); }
  int timeoutMs() const override {
    const int inner = inner_->timeoutMs();
    return failing_over_ && round_ended_ ? 0 : std::min(inner < 0 ? 1000 : inner, 1000);
  }

  std::vector<JobEvent> service(const std::vector<pollfd>& fds) override {
    std::vector<JobEvent> out;
    if (keeper_->lost() && !lease_lost_) leaseLost(out);
    for (JobEvent& e : inner_->service(fds)) {
      if (e.kind == JobEvent::Kind::End && e.hub_lost && !hub_) {
        failing_over_ = true;
        lost_why_ = e.message;
        if (!round_ended_) out.push_back(JobEvent::stop(0, e.message + "; etcd elects another machine 0"));
        continue;
      }
      if (e.kind == JobEvent::Kind::End && hub_) record([&] { records_.end(job_, e); });
      if (e.kind == JobEvent::Kind::Restart) {
        round_ended_ = false;
        if (hub_) record([&] { records_.state(job_, e.round, e.restarts); });
      }
      out.push_back(std::move(e));
    }
    if (failing_over_ && round_ended_) out.push_back(failOver());
    return out;
  }

  void workerFailed(const WorkerFailure& failure, bool replaces) override {
    if (!failing_over_) inner_->workerFailed(failure, replaces);
  }
  void interrupted(int signal) override { inner_->interrupted(signal); }
  void roundEnded(int round, bool succeeded, long long saved_step) override {
    round_ended_ = true;
    if (!failing_over_) inner_->roundEnded(round, succeeded, saved_step);
  }
  void ask(long long id, int rank) override { inner_->ask(id, rank); }
  void tell(long long id, const std::string& text) override { inner_->tell(id, text); }
  void hold(bool stopped) override { inner_->hold(stopped); }
  void progressed() override { inner_->progressed(); }
  void stacksCollected(long long id, const std::vector<stacks::RankStack>& stacks) override {
    inner_->stacksCollected(id, stacks);
  }
  void wantStacks(long long id, double seconds) override { inner_->wantStacks(id, seconds); }
  bool sendArrivals(const flight::Arrivals& a) override { return !inner_ || inner_->sendArrivals(a); }
  bool sendEvent(const std::string& line) override { return inner_ && inner_->sendEvent(line); }
  bool sendStatus(const std::string& json) override { return inner_ && inner_->sendStatus(json); }
  LogSend sendLogs(const LogChunk& chunk, bool force) override {
    return inner_ ? inner_->sendLogs(chunk, force) : LogSend::Nobody;
  }
  std::vector<MachineReport> machineReports() const override {
    return inner_ ? inner_->machineReports() : std::vector<MachineReport>{};
  }
  void askStatus(long long id) override {
    if (inner_) inner_->askStatus(id);
  }
  void tellStatus(int machine, long long id, const std::string& json) override {
    if (inner_) inner_->tellStatus(machine, id, json);
  }

 private:
  // Until this launcher is in a round under a machine 0 etcd named (itself, or the one it
  // joined): nothing; or the job's end where it ended meanwhile (a verdict, an interrupt).
  std::optional<JobEvent> join(Clock::time_point deadline) {
    std::string last_error;
    for (;;) {
      if (int signal = waitFor(0)) return interruptedEnd(signal);
      if (Clock::now() >= deadline) {
        throw Error(records_.noMachineZero(plan_.join_timeout, last_error),
                    "start `accel launch` with the same --rdzv_endpoint and --rdzv_id on the job's machines, and "
                    "check that they reach each other's job ports");
      }
      try {
        if (auto end = joinOnce()) return end;
        if (inner_) return std::nullopt;
      } catch (const UsageError&) {
        throw;
      } catch (const HubLost&) {
        throw;
      } catch (const Error& e) {  // etcd did not answer this time: again, until the deadline
        last_error = e.what();
      }
      if (int signal = waitFor(200)) return interruptedEnd(signal);
    }
  }

  // One look at etcd: joins the machine 0 it names, or claims the key where none holds it.
  std::optional<JobEvent> joinOnce() {
    const std::optional<HubRecord> hub = records_.hub();
    if (hub && hub->revision != lost_revision_) return follow(*hub);
    if (!job_.empty()) {
      if (auto verdict = records_.verdict(job_)) return verdict;
    }
    if (hub || !claim()) return std::nullopt;  // the lost one's key is still there, or another launcher won
    return hostRound();
  }

  // Joins the machine 0 that `hub` names: nothing once in a round (inner_ set), or the end.
  std::optional<JobEvent> follow(const HubRecord& hub) {
    hub_address_ = {hub.address, hub.port};
    hub_host_ = hub.host;
    hub_ = nullptr;
    inner_ = makeMemberLink(plan_, hub_address_);
    try {
      if (int rc = inner_->rendezvous(signal_fd_)) return interruptedEnd(rc - 128);
      job_ = hub.job;
      hub_revision_ = hub.revision;
      return std::nullopt;
    } catch (const HubLost& lost) {
      lost_revision_ = hub.revision;
      inner_.reset();
      return std::nullopt;
    }
  }

  // Tries to become machine 0: true when this launcher's create of the key won.
  bool claim() {
    const std::optional<JobState> state = records_.state();
    const bool continues = state && !records_.verdict(state->job);
    const std::string address = ownAddress();
    HubDoor::Limits limits;
    std::optional<JobHub::Continuation> from;
    if (continues) {
      // Survivors of a lost machine 0 are registered: the round forms as soon as they are back.
      const int expected = job_.empty() ? 0 : records_.registered();
      from = JobHub::Continuation{state->round + 1, state->restarts, expected};
    }
    auto hub = std::make_unique<JobHub>(plan_, limits, HubDoor::Note{}, from);
    const std::string job = continues ? state->job : job_.empty() ? records_.newJobId() : job_;
    const HubRecord mine{job, plan_.host, address, hub->port(), 0};
    if (!records_.claimHub(mine, lease_, hub_revision_)) return false;
    job_ = job;
    hub_address_ = {address, hub->port()};
    hub_ = hub.get();
    inner_ = std::move(hub);
    return true;
  }

  std::optional<JobEvent> hostRound() {
    if (int rc = inner_->rendezvous(signal_fd_)) return interruptedEnd(rc - 128);
    const auto l = inner_->layout();
    record([&] { records_.state(job_, l ? l->round : 0, l ? l->restarts : 0); });
    return std::nullopt;
  }

  // Machine 0 was lost and this machine's round is over: the next round under the machine 0
  // etcd elects now.
  JobEvent failOver() {
    failing_over_ = round_ended_ = false;
    lost_revision_ = hub_revision_;
    inner_.reset();
    hub_ = nullptr;
    const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
    if (auto end = join(deadline)) return *end;
    const auto l = layout();
    JobEvent e = JobEvent::restart(l->round, firstPort());
    e.restarts = l->restarts;
    e.message =
        fmt::format("{}; {} is machine 0 now (elected in etcd at {}); round {}: world size {}", lost_why_,
                    hub_ ? plan_.host + " (this machine)" : fmt::format("{} ({})", hub_host_, hub_address_.host),
                    plan_.etcd->server.text(), l->round, plan::worldOf(l->shares));
    return e;
  }

  // A write that etcd may miss: the job goes on; a machine 0 elected later then starts from
  // the state before it.
  template <class Write> void record(Write write) {
    try {
      write();
    } catch (const Error& e) {
      writeFully(2, fmt::format("accel: note: etcd missed a record of the job: {}\n", e.what()));
    }
  }

  // This launcher's lease ran out. Machine 0 ends its part (the others elect another machine 0
  // once its connection closes); another launcher registers again under a new lease, so that
  // the next machine 0 still counts it.
  void leaseLost(std::vector<JobEvent>& out) {
    const std::string why = keeper_->why();
    if (hub_) {
      lease_lost_ = true;
      out.push_back(JobEvent::end(1, fmt::format("machine 0 ({}) lost its etcd lease: {}", plan_.host, why),
                                  "the other machines elect another machine 0 and go on; check this machine's "
                                  "network towards etcd"));
      return;
    }
    try {
      keeper_.reset();
      lease_ = etcd_.grantLease(ttl_);
      keeper_ = std::make_unique<etcd::LeaseKeeper>(*plan_.etcd, lease_, ttl_);
      records_.enter(lease_, plan_.host);
    } catch (const Error&) {  // etcd is still away: again at the next service
      if (!keeper_) keeper_ = std::make_unique<etcd::LeaseKeeper>(*plan_.etcd, lease_, ttl_);
    }
  }

  JobEvent interruptedEnd(int signal) {
    JobEvent e = JobEvent::end(128 + signal);
    e.signal = signal;
    return e;
  }

  // Polls the signal descriptor for `ms`: the interrupt's signal, or 0.
  int waitFor(int ms) {
    pollfd p{signal_fd_, POLLIN, 0};
    ::poll(&p, 1, ms);
    return process::readInterrupt(signal_fd_, p.revents);
  }

  // The address the other machines reach this one at: torchrun's --local_addr, else the one
  // this machine reaches etcd from.
  std::string ownAddress() const {
    if (!plan_.local_addr.empty()) return plan_.local_addr;
    const std::string towards = net::localAddressTowards(net::resolveIPv4(plan_.etcd->server.host));
    return towards.empty() ? "127.0.0.1" : towards;
  }

  const plan::LaunchPlan& plan_;
  etcd::EtcdClient etcd_;
  EtcdRecords records_;
  long long lease_ = 0, ttl_ = 0;
  std::unique_ptr<etcd::LeaseKeeper> keeper_;
  std::unique_ptr<JobLink> inner_;
  JobHub* hub_ = nullptr;  // inner_, where this machine is machine 0
  HubAddress hub_address_;
  std::string hub_host_;
  long long hub_revision_ = 0, lost_revision_ = 0;
  std::string job_;  // the job's id in etcd: a relaunch under the same run id is another job
  std::string lost_why_;
  int signal_fd_ = -1;
  bool failing_over_ = false, round_ended_ = false, lease_lost_ = false;
};

}  // namespace

std::unique_ptr<JobLink> makeEtcdLink(const plan::LaunchPlan& plan) { return std::make_unique<EtcdLink>(plan); }

}  // namespace accel::launch::job
