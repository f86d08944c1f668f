// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/job_member.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/flight_ring.h"
#include "lib/common/process/signal_channel.h"
#include "lib/common/socket.h"
#include "lib/launch/job/hang_watch.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/job/line_connection.h"
#include "lib/launch/job/member_stacks.h"
#include "lib/launch/job/own_absence.h"

namespace accel::launch::job {

namespace {

using Clock = std::chrono::steady_clock;

// "machine 2", or "this machine" before machine 0 gave it a rank.
std::string self(const plan::LaunchPlan& plan) {
  return plan.machine_rank < 0 ? std::string("this machine") : fmt::format("machine {}", plan.machine_rank);
}

class JobMember final : public JobLink {
 public:
  JobMember(const plan::LaunchPlan& plan, std::optional<HubAddress> hub)
      : plan_(plan),
        elected_(hub.has_value()),
        hub_address_(hub.value_or(HubAddress{plan.master_addr, plan.job_port})),
        absence_(plan.heartbeat_timeout, self(plan)) {}

  int rendezvous(int signal_fd) override {
    const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
    if (int signal = join(signal_fd, deadline)) return signal;
    std::vector<JobEvent> kept;  // a stop that came with the start is the supervisor's to follow
    for (;;) {                   // machine 0 answers once every machine joined; its heartbeats say it is alive
      if (std::exchange(rejoin_, false)) {
        ::poll(nullptr, 0, 200);
        if (int signal = join(signal_fd, deadline)) return signal;
      }
      std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
      addPollFds(fds);
      int rc = ::poll(fds.data(), fds.size(), timeoutMs());
      if (rc < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", ::strerror(errno)));
      if (int signal = process::readInterrupt(signal_fd, fds[0].revents)) return 128 + signal;
      for (auto& e : service(fds)) {
        if (e.kind != JobEvent::Kind::End) {
          kept.push_back(std::move(e));
          continue;
        }
        if (e.signal) return 128 + e.signal;
        if (e.hub_lost) throw HubLost(e.message, e.hint);
        if (e.exit_code == 2) throw UsageError(e.message, e.hint);
        throw Error(e.message, e.hint);
      }
      if (first_port_) {
        queued_.insert(queued_.begin(), kept.begin(), kept.end());
        return 0;
      }
    }
  }

  int firstPort() const override { return first_port_; }
  std::optional<Layout> layout() const override { return layout_; }

  void addPollFds(std::vector<pollfd>& fds) const override {
    if (hub_ && hub_->open()) fds.push_back(hub_->pollFd());
  }

  int timeoutMs() const override {
    if (!queued_.empty()) return 0;
    const int heartbeat = static_cast<int>(heartbeatInterval(plan_.heartbeat_timeout).count());
    const int gathering = stacks_.timeoutMs();
    return gathering < 0 ? heartbeat : std::min(heartbeat, gathering);
  }

  std::vector<JobEvent> service(const std::vector<pollfd>& fds) override {
    absence_.tick();
    if (hub_ && !ended_ && !stacks_.gathering()) {
      for (const auto& p : fds) {
        if (hub_->open() && p.fd == hub_->fd() && p.revents) read(p.revents);
      }
      if (!ended_ && !stacks_.gathering()) heartbeat();
    }
    for (JobEvent& e : stacks_.finished()) {
      if (e.kind == JobEvent::Kind::End) {
        end(std::move(e));  // the end that waited for this machine's own stacks
      } else {
        queued_.push_back(std::move(e));
      }
    }
    return std::exchange(queued_, {});
  }

  void workerFailed(const WorkerFailure& failure, bool replaces) override { send(job::Failed{failure, replaces}); }
  void interrupted(int signal) override { send(job::Interrupted{signal}); }
  void roundEnded(int round, bool succeeded, long long saved_step) override {
    send(job::Ended{round, succeeded, saved_step});
  }
  void ask(long long id, int rank) override {
    if (ended_ || !hub_ || !hub_->open()) {
      return queued_.push_back(
          JobEvent::answer(id, fmt::format("this launcher no longer hears machine 0 ({})", hubAddress())));
    }
    send(job::Ask{id, rank});
  }
  void tell(long long id, const std::string& text) override { send(job::Tell{id, text}); }
  void hold(bool stopped) override {
    setHeld(stopped);
    send(job::Hold{stopped, plan_.machine_rank});
  }

  void progressed() override {
    if (Clock::now() - progress_sent_ < kProgressEvery) return;
    progress_sent_ = Clock::now();
    send(job::Progress{});
  }
  void stacksCollected(long long id, const std::vector<stacks::RankStack>& stacks) override {
    stacks_.collected(id, stacks);
  }
  void wantStacks(long long id, double seconds) override {
    if (ended_ || stacks_.gathering() || !hub_ || !hub_->open()) {
      stacks::GatheredStacks none;
      none.notes.push_back(fmt::format("this launcher no longer hears machine 0 ({})", hubAddress()));
      return queued_.push_back(JobEvent::gathered(id, std::move(none)));
    }
    send(job::StacksWanted{id, seconds});
  }

  // Sent on the member's clock (with the test's skew); dropped while the channel is behind.
  bool sendArrivals(const flight::Arrivals& a) override {
    if (ended_ || !first_port_ || !hub_ || !hub_->open() || hub_->queued() > kMaxQueuedArrivals) return true;
    for (size_t from = 0; from < a.calls.size(); from += job::kMaxArrivals) {
      job::ArrivalsSent part{{a.round, a.host, a.ranks, {}}};
      const size_t to = std::min(a.calls.size(), from + job::kMaxArrivals);
      for (size_t i = from; i < to; ++i) {
        part.arrivals.calls.push_back({a.calls[i].rank, a.calls[i].seq, a.calls[i].ns + plan_.clock_skew_ns});
      }
      send(part);
    }
    return true;
  }

  // Dropped while the channel is far behind: events are machine 0's story, never worth a stall.
  // Before the job starts they wait (a few: what a launcher tells before its round is little).
  bool sendEvent(const std::string& line) override {
    if (ended_) return true;
    if (!first_port_ || !hub_ || !hub_->open()) {
      if (early_events_.size() < kMaxEarlyEvents) early_events_.push_back(line);
      return true;
    }
    if (hub_->queued() <= kMaxQueuedArrivals) send(job::EventSent{line});
    return true;
  }

  bool sendStatus(const std::string& json) override {
    if (!ended_ && first_port_ && hub_ && hub_->open() && hub_->queued() <= kMaxQueuedArrivals) {
      send(job::StatusSent{json});
    }
    return true;
  }
  LogSend sendLogs(const LogChunk& chunk, bool force) override {
    if (ended_ || !first_port_ || !hub_ || !hub_->open()) return LogSend::Nobody;
    if (!force && hub_->queued() > kMaxQueuedLogs) return LogSend::Later;
    send(job::LogsSent{chunk});
    return LogSend::Sent;
  }
  void askStatus(long long id) override {
    if (ended_ || !first_port_ || !hub_ || !hub_->open()) {
      JobEvent e;
      e.kind = JobEvent::Kind::StatusAnswer;
      e.id = id;
      return queued_.push_back(std::move(e));
    }
    send(job::StatusAsked{id});
  }

 private:
  static constexpr size_t kMaxQueuedArrivals = 1 << 20;  // bytes queued to machine 0
  static constexpr size_t kMaxEarlyEvents = 64;
  static constexpr size_t kMaxQueuedLogs = 4 << 20;  // bytes queued to machine 0 before logs wait
  std::vector<std::string> early_events_;            // told before the job started

  const plan::LaunchPlan& plan_;
  const bool elected_;  // etcd elected machine 0: when it is lost, another is
  const HubAddress hub_address_;
  std::unique_ptr<LineConnection> hub_;
  int first_port_ = 0;
  std::optional<Layout> layout_;
  bool ended_ = false;
  bool rejoin_ = false;  // machine 0 closed the connection before the start
  bool held_ = false;    // the job is stopped with Ctrl-Z somewhere: silence is no loss
  OwnAbsence absence_;
  std::vector<JobEvent> queued_;
  Clock::time_point progress_sent_{};
  MemberStacks stacks_{plan_, [this](const job::Message& m) { send(m); }};

  void setHeld(bool stopped) {
    held_ = stopped;
    if (!held_) absence_.resumed();
  }

  std::string hubAddress() const { return fmt::format("{}:{}", hub_address_.host, hub_address_.port); }

  void send(const job::Message& message) {
    if (hub_) hub_->send(job::encode(message));
  }

  int join(int signal_fd, Clock::time_point deadline) {
    if (int signal = connect(signal_fd, deadline)) return signal;
    send(job::Join{job::kProtocolVersion, plan_.machine_rank, plan_.host, ::getpid(), plan_.max_machines,
                   plan_.min_machines, plan_.world_at_join ? 0 : plan_.world_size, plan_.token,
                   static_cast<int>(plan_.workers.size()), plan_.role});
    return 0;
  }

  // Machine 0's launcher may start after this one: retried until the join deadline.
  int connect(int signal_fd, Clock::time_point deadline) {
    std::string error;
    for (;;) {
      auto attempt = std::min(deadline, Clock::now() + std::chrono::seconds(5));
      int fd = net::connectTcp(hub_address_.host, hub_address_.port, attempt, error);
      if (fd >= 0) {
        hub_ = std::make_unique<LineConnection>(fd);
        return 0;
      }
      if (elected_) {  // the launcher etcd named is gone: etcd names the next
        throw HubLost(fmt::format("machine 0 ({}) could not be reached: {}", hubAddress(), error));
      }
      if (Clock::now() >= deadline) break;
      pollfd p{signal_fd, POLLIN, 0};
      ::poll(&p, 1, std::min(200, net::remainingMs(deadline)));
      if (int signal = process::readInterrupt(signal_fd, p.revents)) return 128 + signal;
    }
    const net::Route route = net::routeTowards(plan_.master_addr);
    throw Error(
        fmt::format("{} ({}{}) could not reach machine 0's launcher at {} within {:g} s: {}", self(plan_), plan_.host,
                    route.address.empty()
                        ? ", no route to it"
                        : ", " + route.address + (route.interface.empty() ? "" : " on " + route.interface),
                    hubAddress(), plan_.join_timeout, error),
        fmt::format("check that --main_process_ip {} is machine 0's address as this machine sees it, that "
                    "`accel launch` runs there with --main_process_port {}, and that a firewall lets TCP ports "
                    "{} (the store) and {} (the launchers' job channel, --job_port) through",
                    plan_.master_addr, plan_.main_process_port, plan_.main_process_port, plan_.job_port));
  }

  void heartbeat() {
    const auto timeout = defaults::fromSeconds(plan_.heartbeat_timeout);
    // Closed before the start without a word (machine 0's door was crowded): join again.
    if (!hub_->open() && !first_port_ && !elected_) return void(rejoin_ = true);
    if (!hub_->open()) return lost("its launcher's connection closed (" + hub_->error() + ")");
    if (Clock::now() - hub_->lastSent() >= heartbeatInterval(plan_.heartbeat_timeout)) send(job::Heartbeat{});
    if (held_ || absence_.silence(*hub_) < timeout) return;
    read(POLLIN);  // what arrived while this launcher was away counts first
    if (ended_ || !hub_->open() || absence_.silence(*hub_) < timeout) return;
    lost(fmt::format("no word from its launcher for {:g} s", plan_.heartbeat_timeout));
  }

  void read(short revents) {
    for (const auto& line : hub_->service(revents)) {
      if (const int v = job::versionOf(line); v > 0 && v != job::kProtocolVersion) return otherVersion(v);
      std::string error;
      auto message = job::decode(line, error);
      if (!message) return lost("it sent a line this launcher cannot read: " + error);
      onMessage(*message);
      if (ended_) return;
    }
  }

  // A round that gives this launcher a rank it did not have, or a layout without its workers or
  // of a size the job cannot have, comes from a broken machine 0.
  bool validRound(int machine, const std::vector<plan::MachineShare>& layout, const char* what) {
    const int machines = static_cast<int>(layout.size());
    const bool sized = plan_.dynamic ? machines >= 1 && machines <= plan_.max_machines : machines == plan_.max_machines;
    const bool ok = (plan_.dynamic || plan_.machine_rank < 0 || machine == plan_.machine_rank) && machine > 0 &&
                    machine < machines && sized &&
                    layout[static_cast<size_t>(machine)].procs == static_cast<int>(plan_.workers.size());
    if (!ok)
      lost(fmt::format("its {} gave machine {} of a layout of {} machines, which does not fit this launcher", what,
                       machine, layout.size()));
    return ok;
  }

  void otherVersion(int version) {
    end(JobEvent::end(2,
                      fmt::format("machine 0's launcher ({}) speaks the job protocol of version {}, this one ({}) "
                                  "speaks version {}",
                                  hubAddress(), version, plan_.host, job::kProtocolVersion),
                      "install the same accel on every machine (`accel --version` there and here)"));
  }

  // Machine 0 is gone: this machine's ranks' stacks are read before its workers stop (where the
  // job had started and the stacks are on).
  void lost(const std::string& why) {
    JobEvent e = JobEvent::end(1, fmt::format("machine 0 ({}) was lost: {}", hubAddress(), why),
                               "machine 0's launcher was killed, or its host or network went down; this machine's "
                               "workers were stopped; --rdzv_backend etcd would have elected another machine 0 "
                               "and gone on");
    e.hub_lost = true;
    if (elected_) e.hint.clear();
    if (!first_port_ || plan_.stacks_timeout <= 0 || elected_) return end(std::move(e));  // etcd: the job goes on
    hub_->close();
    queued_.push_back(stacks_.gatherOwn(std::move(e)));
  }

  void end(JobEvent e) {
    ended_ = true;
    hub_->close();
    if (const std::string own = absence_.hint(); !own.empty() && e.exit_code == 1 && !e.failure) e.hint = own;
    queued_.push_back(std::move(e));
  }

  void onMessage(const job::Message& m) {
    if (auto* s = std::get_if<job::Start>(&m)) {
      if (first_port_ || !validRound(s->machine, s->layout, "start")) return;
      first_port_ = s->port;
      layout_ = Layout{s->machine, s->layout, s->round, s->restarts, ""};
      for (const auto& line : early_events_) send(job::EventSent{line});
      early_events_.clear();
    } else if (auto* stop = std::get_if<job::Stop>(&m)) {
      queued_.push_back(JobEvent::stop(stop->round, stop->why));
    } else if (auto* restart = std::get_if<job::Restart>(&m)) {
      if (!validRound(restart->machine, restart->layout, "restart")) return;
      layout_ = Layout{restart->machine, restart->layout, restart->round, restart->restarts, ""};
      JobEvent e = JobEvent::restart(restart->round, restart->port);
      e.failure = restart->failure;
      e.restarts = restart->restarts;
      e.message = restart->why;
      queued_.push_back(std::move(e));
    } else if (auto* answer = std::get_if<job::StatusAnswer>(&m)) {
      JobEvent e;
      e.kind = JobEvent::Kind::StatusAnswer;
      e.id = answer->id;
      e.message = answer->json;
      queued_.push_back(std::move(e));
    } else if (auto* refuse = std::get_if<job::Refuse>(&m)) {
      end(JobEvent::end(2, refuse->message, refuse->hint));
    } else if (auto* e = std::get_if<job::End>(&m)) {
      JobEvent event = JobEvent::end(e->code, e->message, e->hint);
      event.signal = e->signal;
      event.failure = e->failure;
      end(std::move(event));
    } else if (auto* a = std::get_if<job::Ask>(&m)) {
      queued_.push_back(JobEvent::ask(a->id, a->rank));
    } else if (auto* t = std::get_if<job::Tell>(&m)) {
      queued_.push_back(JobEvent::answer(t->id, t->text));
    } else if (auto* h = std::get_if<job::Hold>(&m)) {
      setHeld(h->stopped);
      queued_.push_back(JobEvent::hold(h->stopped));
    } else if (std::holds_alternative<job::StacksWanted>(m) || std::holds_alternative<job::StackPart>(m) ||
               std::holds_alternative<job::StacksDone>(m)) {
      if (auto event = stacks_.fromHub(m)) queued_.push_back(std::move(*event));
    } else if (auto* probe = std::get_if<job::ClockProbe>(&m)) {
      send(job::ClockEcho{probe->id, accel::flight::nowNs() + plan_.clock_skew_ns});
    } else if (!std::holds_alternative<job::Heartbeat>(m)) {
      lost(fmt::format("it sent a '{}', which only other machines send", job::kindName(m)));
    }
  }
};

}  // namespace

std::unique_ptr<JobLink> makeMemberLink(const plan::LaunchPlan& plan, std::optional<HubAddress> hub) {
  return std::make_unique<JobMember>(plan, std::move(hub));
}

}  // namespace accel::launch::job
