// SPDX-License-Identifier: Apache-2.0
// The side of the job channel on machines 1..N-1 (job_link.h): joins machine 0's launcher,
// reports this machine's failures, interrupts and round ends, and follows machine 0's orders.
// When machine 0 goes silent for the heartbeat timeout, or its connection closes, the job is
// over for this machine: its workers are stopped and the launch ends naming machine 0.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/launch/job_wire.h"

namespace accel {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

class JobMember final : public JobLink {
 public:
  explicit JobMember(const LaunchPlan& plan) : plan_(plan) {}

  int rendezvous(int signal_fd) override {
    const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
    if (int signal = connect(signal_fd, deadline)) return signal;
    hub_->send({{"t", "join"}, {"machine", plan_.machine_rank}, {"host", plan_.host}, {"pid", ::getpid()},
                {"machines", plan_.num_machines}, {"world", plan_.world_size}, {"token", plan_.token}});
    for (;;) {  // machine 0 answers once every machine joined; its heartbeats say it is alive
      std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
      addPollFds(fds);
      int rc = ::poll(fds.data(), fds.size(), timeoutMs());
      if (rc < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", ::strerror(errno)));
      if (int signal = readInterrupt(signal_fd, fds[0].revents)) return 128 + signal;
      for (auto& e : service(fds)) {
        if (e.kind != JobEvent::Kind::End) continue;
        if (e.signal) return 128 + e.signal;
        if (e.exit_code == 2) throw UsageError(e.message, e.hint);
        throw Error(e.message, e.hint);
      }
      if (first_port_) return 0;
    }
  }

  int firstPort() const override { return first_port_; }

  void addPollFds(std::vector<pollfd>& fds) const override {
    if (hub_ && hub_->open()) fds.push_back(hub_->pollFd());
  }

  int timeoutMs() const override {
    if (!queued_.empty()) return 0;
    return static_cast<int>(heartbeatInterval(plan_.heartbeat_timeout).count());
  }

  std::vector<JobEvent> service(const std::vector<pollfd>& fds) override {
    if (!hub_ || ended_) return std::exchange(queued_, {});
    for (const auto& p : fds) {
      if (hub_->open() && p.fd == hub_->fd() && p.revents) {
        for (const auto& message : hub_->service(p.revents)) onMessage(message);
      }
    }
    const auto now = Clock::now();
    const auto timeout = defaults::fromSeconds(plan_.heartbeat_timeout);
    if (!ended_ && hub_->open() && now - hub_->lastSent() >= heartbeatInterval(plan_.heartbeat_timeout)) hub_->send({{"t", "hb"}});
    if (!ended_ && (!hub_->open() || now - hub_->lastHeard() >= timeout)) {
      lost(hub_->open() ? fmt::format("no word from its launcher for {:g} s", plan_.heartbeat_timeout)
                        : "its launcher's connection closed (" + hub_->error() + ")");
    }
    return std::exchange(queued_, {});
  }

  void workerFailed(const WorkerFailure& failure, bool replaces) override {
    hub_->send({{"t", "failed"}, {"failure", failureToJson(failure)}, {"replaces", replaces}});
  }
  void interrupted(int signal) override { hub_->send({{"t", "interrupted"}, {"signal", signal}}); }
  void roundEnded(int round, bool succeeded) override { hub_->send({{"t", "ended"}, {"round", round}, {"ok", succeeded}}); }

 private:
  const LaunchPlan& plan_;
  std::unique_ptr<LineConnection> hub_;
  int first_port_ = 0;
  bool ended_ = false;
  std::vector<JobEvent> queued_;


  std::string hubAddress() const { return fmt::format("{}:{}", plan_.master_addr, plan_.job_port); }

  // Machine 0's launcher may start after this one: retried until the join deadline.
  int connect(int signal_fd, Clock::time_point deadline) {
    std::string error;
    for (;;) {
      auto attempt = std::min(deadline, Clock::now() + std::chrono::seconds(5));
      int fd = net::connectTcp(plan_.master_addr, plan_.job_port, attempt, error);
      if (fd >= 0) {
        hub_ = std::make_unique<LineConnection>(fd);
        return 0;
      }
      if (Clock::now() >= deadline) break;
      pollfd p{signal_fd, POLLIN, 0};
      ::poll(&p, 1, std::min(200, net::remainingMs(deadline)));
      if (int signal = readInterrupt(signal_fd, p.revents)) return 128 + signal;
    }
    const net::Route route = net::routeTowards(plan_.master_addr);
    throw Error(fmt::format("machine {} ({}{}) could not reach machine 0's launcher at {} within {:g} s: {}",
                            plan_.machine_rank, plan_.host,
                            route.address.empty() ? ", no route to it"
                                                  : ", " + route.address + (route.interface.empty() ? "" : " on " + route.interface),
                            hubAddress(), plan_.join_timeout, error),
                fmt::format("check that --main_process_ip {} is machine 0's address as this machine sees it, that "
                            "`accel launch` runs there with --main_process_port {}, and that a firewall lets TCP ports "
                            "{} (the store) and {} (the launchers' job channel, --job_port) through",
                            plan_.master_addr, plan_.main_process_port, plan_.main_process_port, plan_.job_port));
  }

  void lost(const std::string& why) {
    ended_ = true;
    hub_->close();
    queued_.push_back(JobEvent::end(1, fmt::format("machine 0 ({}) was lost: {}", hubAddress(), why),
                                    "machine 0's launcher was killed, or its host or network went down; this "
                                    "machine's workers were stopped"));
  }

  void onMessage(const json& m) {
    const std::string type = m.value("t", "");
    JobEvent e;
    if (type == "start") {
      first_port_ = m.value("port", plan_.master_port);
      return;
    } else if (type == "stop") {
      e = JobEvent::stop(m.value("round", 0), m.value("why", ""));
    } else if (type == "restart") {
      e = JobEvent::restart(m.value("round", 0), m.value("port", 0));
    } else if (type == "end" || type == "refuse") {
      e = JobEvent::end(type == "refuse" ? 2 : m.value("code", 1), m.value("message", ""), m.value("hint", ""));
      e.signal = m.value("signal", 0);
      ended_ = true;
    } else {
      return;  // hb
    }
    if (m.contains("failure") && m["failure"].is_object()) e.failure = failureFromJson(m["failure"]);
    queued_.push_back(std::move(e));
  }
};

}  // namespace

std::unique_ptr<JobLink> makeMemberLink(const LaunchPlan& plan) { return std::make_unique<JobMember>(plan); }

}  // namespace accel
