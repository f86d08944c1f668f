// SPDX-License-Identifier: Apache-2.0
// Machine 0's side of the job channel (job_link.h): waits until every machine's launcher joined,
// then decides for the whole job. The first failure, interrupt or lost machine anywhere makes it
// tell every machine to stop its workers; once every machine's round ended it sends the verdict:
// the next round (fresh MASTER_PORT) or the end, with the exit code and the failure to name.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/launch/job_wire.h"

namespace accel {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Member {
  std::unique_ptr<LineConnection> conn;
  std::string host;
  std::string address;
  int pid = 0;
  bool ended = false;
  bool ok = false;
  bool lost = false;
};

class JobHub final : public JobLink {
 public:
  explicit JobHub(const LaunchPlan& plan) : plan_(plan) {
    std::string error;
    int error_number = 0;
    listen_fd_ = net::listenTcp("", plan.job_port, error, error_number);
    if (listen_fd_ < 0) {
      throw Error(fmt::format("machine 0 cannot listen on the job port {}: {}", plan.job_port, error),
                  "the job channel between the machines' launchers uses that port: free it, or pass "
                  "--job_port (the same on every machine)");
    }
  }
  ~JobHub() override {
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  int rendezvous(int signal_fd) override {
    const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
    while (static_cast<int>(members_.size()) < plan_.num_machines - 1) {
      if (Clock::now() >= deadline) failJoin(missingMachines());
      std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
      addPollFds(fds);
      int rc = ::poll(fds.data(), fds.size(), std::min(net::remainingMs(deadline), timeoutMs()));
      if (rc < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", ::strerror(errno)));
      if (int signal = readInterrupt(signal_fd, fds[0].revents)) {
        broadcast({{"t", "end"}, {"code", 128 + signal}, {"signal", signal}});
        return 128 + signal;
      }
      for (auto& e : service(fds)) {
        if (e.kind == JobEvent::Kind::End) failJoin(e.message, e.hint, e.exit_code);
      }
    }
    broadcast({{"t", "start"}, {"port", plan_.master_port}});
    started_ = true;
    return 0;
  }

  void addPollFds(std::vector<pollfd>& fds) const override {
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : pending_) fds.push_back(c->pollFd());
    for (const auto& [k, m] : members_) {
      if (m.conn->open()) fds.push_back(m.conn->pollFd());
    }
  }

  int timeoutMs() const override {
    if (!queued_.empty()) return 0;
    return static_cast<int>(heartbeatInterval(plan_.heartbeat_timeout).count());
  }

  std::vector<JobEvent> service(const std::vector<pollfd>& fds) override {
    for (const auto& p : fds) {
      if (p.fd == listen_fd_ && (p.revents & POLLIN)) accept();
    }
    servicePending(fds);
    for (auto& [machine, m] : members_) {
      if (!m.conn->open()) continue;
      for (const auto& p : fds) {
        if (p.fd == m.conn->fd() && p.revents) {
          for (const auto& message : m.conn->service(p.revents)) onMessage(machine, m, message);
        }
      }
      heartbeat(machine, m);
    }
    return std::exchange(queued_, {});
  }

  void workerFailed(const WorkerFailure& failure, bool replaces) override { onFailure(failure, replaces); }
  void interrupted(int signal) override { onInterrupt(signal, 0); }
  void roundEnded(int, bool succeeded) override {
    self_ended_ = true;
    self_ok_ = succeeded;
    decideIfEnded();
  }

 private:
  const LaunchPlan& plan_;
  int listen_fd_ = -1;
  bool started_ = false;
  std::vector<std::unique_ptr<LineConnection>> pending_;  // connected, not yet joined
  std::map<int, Member> members_;                         // machine rank 1.. -> its launcher
  int round_ = 0;
  bool stopping_ = false, self_ended_ = false, self_ok_ = false;
  bool finished_ = false;  // the end was sent
  FailureLedger ledger_;
  int signal_ = 0;
  std::string lost_, lost_hint_;
  std::vector<JobEvent> queued_;
  Clock::time_point round_started_ = Clock::now();

  double roundSeconds() const { return std::chrono::duration<double>(Clock::now() - round_started_).count(); }

  void broadcast(const json& message) {
    for (auto& [k, m] : members_) m.conn->send(message);
  }


  [[noreturn]] void failJoin(const std::string& message, const std::string& hint = "", int code = 1) {
    broadcast({{"t", "end"}, {"code", code}, {"message", message}, {"hint", hint}});
    for (auto& [k, m] : members_) m.conn->service(POLLOUT);
    if (code == 2) throw UsageError(message, hint);
    throw Error(message, hint);
  }

  std::string missingMachines() const {
    std::vector<std::string> missing, joined;
    for (int k = 1; k < plan_.num_machines; ++k) {
      auto it = members_.find(k);
      if (it == members_.end()) {
        missing.push_back(std::to_string(k));
      } else {
        joined.push_back(fmt::format("{} on {} ({})", k, it->second.host, it->second.address));
      }
    }
    return fmt::format("machine{} {} of {} did not join within {:g} s (joined: machine 0 on {}{}{}); check that "
                       "`accel launch` runs there with --num_machines {} --main_process_ip {} --main_process_port {}",
                       missing.size() > 1 ? "s" : "", join(missing, ", "), plan_.num_machines, plan_.join_timeout,
                       plan_.host, joined.empty() ? "" : ", machine ", join(joined, ", machine "), plan_.num_machines,
                       plan_.master_addr, plan_.main_process_port);
  }

  void accept() {
    int fd;
    while ((fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
      pending_.push_back(std::make_unique<LineConnection>(fd));
    }
  }

  void servicePending(const std::vector<pollfd>& fds) {
    for (size_t i = 0; i < pending_.size();) {
      auto& c = pending_[i];
      std::vector<json> messages;
      for (const auto& p : fds) {
        if (p.fd == c->fd() && p.revents) messages = c->service(p.revents);
      }
      if (!messages.empty() && messages[0].value("t", "") == "join") {
        auto conn = std::move(c);
        pending_.erase(pending_.begin() + static_cast<long>(i));
        admit(std::move(conn), messages[0]);
      } else if (c->closed() || !messages.empty()) {
        pending_.erase(pending_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }

  static void refuse(LineConnection& c, const std::string& message, const std::string& hint) {
    c.send({{"t", "refuse"}, {"message", message}, {"hint", hint}});
  }

  // A launcher that asks to join: the same job (token, machine count, world size), a machine rank
  // that is free. Two launchers with the same rank, or a different shape, end the whole job:
  // the command lines disagree and no machine can train.
  void admit(std::unique_ptr<LineConnection> c, const json& join) {
    const int k = join.value("machine", -1);
    const std::string host = join.value("host", "?"), address = net::peerAddress(c->fd());
    const std::string who = fmt::format("machine {} ({}, {})", k, host, address);
    if (join.value("token", "") != plan_.token) {
      return refuse(*c, fmt::format("{} offered another job's store token to machine 0 ({}:{})", who, plan_.master_addr,
                                    plan_.job_port), "pass the same --rdzv_token on every machine (or none)");
    }
    std::string problem, hint = "run the same accel launch command on every machine; only --machine_rank differs";
    if (started_) {
      problem = fmt::format("{} tried to join after the job started", who);
    } else if (join.value("machines", 0) != plan_.num_machines || join.value("world", 0) != plan_.world_size) {
      problem = fmt::format("{} has --num_machines {} and --num_processes {}, machine 0 ({}) has {} and {}", who,
                            join.value("machines", 0), join.value("world", 0), plan_.host, plan_.num_machines, plan_.world_size);
    } else if (k == 0) {
      problem = fmt::format("{} and this launcher ({}) both have machine_rank 0", who, plan_.host);
      hint = fmt::format("give each machine its own --machine_rank, 0 to {}", plan_.num_machines - 1);
    } else if (auto it = members_.find(k); it != members_.end()) {
      problem = fmt::format("machine_rank {} is claimed twice: by {} ({}, pid {}) and by {} ({}, pid {})", k,
                            it->second.host, it->second.address, it->second.pid, host, address, join.value("pid", 0));
      hint = fmt::format("give each machine its own --machine_rank, 0 to {}", plan_.num_machines - 1);
    }
    if (!problem.empty()) {
      refuse(*c, problem, hint);
      if (started_) return;
      failJoin(problem, hint, 2);
    }
    Member m{std::move(c), host, address, join.value("pid", 0)};
    members_.emplace(k, std::move(m));
  }

  void onMessage(int machine, Member& m, const json& message) {
    const std::string type = message.value("t", "");
    if (type == "failed") {
      onFailure(failureFromJson(message.value("failure", json::object())), message.value("replaces", false));
    } else if (type == "interrupted") {
      onInterrupt(message.value("signal", SIGINT), machine);
    } else if (type == "ended" && message.value("round", -1) == round_) {
      m.ended = true;
      m.ok = message.value("ok", false);
      decideIfEnded();
    }
  }

  void heartbeat(int machine, Member& m) {
    if (finished_) return;  // the verdict is out: members close their connections as they exit
    const auto now = Clock::now();
    const auto timeout = defaults::fromSeconds(plan_.heartbeat_timeout);
    if (m.conn->open() && now - m.conn->lastSent() >= heartbeatInterval(plan_.heartbeat_timeout)) m.conn->send({{"t", "hb"}});
    if (m.lost || (m.conn->open() && now - m.conn->lastHeard() < timeout)) return;
    const std::string why = m.conn->open()
                                ? fmt::format("no word from its launcher for {:g} s", plan_.heartbeat_timeout)
                                : "its launcher's connection closed (" + m.conn->error() + ")";
    m.conn->close();
    onLost(machine, m, why);
  }

  void onLost(int machine, Member& m, const std::string& why) {
    m.lost = true;
    if (!started_) {
      queued_.push_back(JobEvent::end(1, fmt::format("machine {} ({}, {}) left before the job started: {}", machine,
                                                     m.host, m.address, why)));
      return;
    }
    if (lost_.empty() && ledger_.empty() && !signal_) {
      lost_ = fmt::format("machine {} ({}, {}) was lost: {}", machine, m.host, m.address, why);
      lost_hint_ = "its launcher was killed, or its host or network went down; its workers were not seen to fail";
    } else if (lost_.empty()) {
      lost_ = fmt::format("machine {} ({}, {}) was lost while the job stopped: {}", machine, m.host, m.address, why);
    }
    stopAll(lost_);
    decideIfEnded();
  }

  void onFailure(const WorkerFailure& failure, bool replaces) {
    ledger_.add(failure, replaces, roundSeconds());
    if (!replaces) stopAll(fmt::format("{} {}", describeWorker(failure), failure.exit_text));
  }

  void onInterrupt(int signal, int machine) {
    if (!signal_) signal_ = signal;
    stopAll(fmt::format("SIG{} on machine {}", ::sigabbrev_np(signal), machine));
  }

  // Tells every machine, this one too, to stop its workers (once a round).
  void stopAll(const std::string& why) {
    if (stopping_) return;
    stopping_ = true;
    broadcast({{"t", "stop"}, {"round", round_}, {"why", why}});
    queued_.push_back(JobEvent::stop(round_, why));
  }

  void decideIfEnded() {
    if (!self_ended_) return;
    bool all_ok = self_ok_;
    for (const auto& [k, m] : members_) {
      if (!m.ended && !m.lost) return;
      all_ok = all_ok && m.ok && !m.lost;
    }
    JobEvent e = decideRound(round_, plan_.max_restarts, {all_ok, signal_, lost_, lost_hint_, &ledger_});
    json failure = e.failure ? failureToJson(*e.failure) : json();
    if (e.kind == JobEvent::Kind::Restart && (e.port = net::probePort(0)) < 0) {  // a fresh store port
      auto first = e.failure;
      e = JobEvent::end(1, fmt::format("machine 0 ({}) found no free TCP port for round {}'s store", plan_.host, e.round),
                        "free some ports on machine 0 (see `ss -tan`), then launch again");
      e.failure = first;
    }
    if (e.kind == JobEvent::Kind::Restart) {
      broadcast({{"t", "restart"}, {"round", e.round}, {"port", e.port}, {"failure", failure}});
      round_ = e.round;
      stopping_ = self_ended_ = false;
      for (auto& [k, m] : members_) m.ended = false;
      ledger_.clear();
      round_started_ = Clock::now();
    } else {
      broadcast({{"t", "end"}, {"code", e.exit_code}, {"failure", failure}, {"signal", e.signal},
                 {"message", e.message}, {"hint", e.hint}});
      finished_ = true;
    }
    queued_.push_back(std::move(e));
  }
};

}  // namespace

std::unique_ptr<JobLink> makeHubLink(const LaunchPlan& plan) { return std::make_unique<JobHub>(plan); }

}  // namespace accel
