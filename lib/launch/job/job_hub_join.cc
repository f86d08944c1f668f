// SPDX-License-Identifier: Apache-2.0
// JobHub's join (job_hub.h): letting this job's launchers in, refusing the ones that cannot be
// part of it, and the start once every machine joined, with the job's layout.
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/process/signal_channel.h"
#include "lib/common/socket.h"
#include "lib/launch/job/job_hub.h"

namespace accel::launch::job {

using Clock = std::chrono::steady_clock;

int JobHub::rendezvous(int signal_fd) {
  const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
  while (static_cast<int>(members_.size()) < plan_.num_machines - 1) {
    if (Clock::now() >= deadline) failJoin(missingMachines(plan_, joined()));
    std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
    addPollFds(fds);
    int rc = ::poll(fds.data(), fds.size(), std::min(net::remainingMs(deadline), timeoutMs()));
    if (rc < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", ::strerror(errno)));
    if (int signal = process::readInterrupt(signal_fd, fds[0].revents)) {
      broadcast(job::End{128 + signal, signal, "", "", std::nullopt});
      return 128 + signal;
    }
    for (auto& e : service(fds)) {
      if (e.kind == JobEvent::Kind::End) failJoin(e.message, e.hint, e.exit_code);
    }
  }
  start();
  return 0;
}

// Every machine joined: the layout is settled and each machine hears it with its own rank.
void JobHub::start() {
  Settled settled = settleLayout(plan_, joined());
  if (settled.refusal) failJoin(settled.refusal->problem, settled.refusal->hint, 2);
  for (auto& [k, m] : members_) {
    m.conn->send(job::encode(job::Start{job::kProtocolVersion, plan_.master_port, k, settled.layout}));
  }
  layout_ = Layout{0, std::move(settled.layout)};
  started_ = true;
  hang_.restart();
}

void JobHub::failJoin(const std::string& message, const std::string& hint, int code) {
  broadcast(job::End{code, 0, message, hint, std::nullopt});
  for (auto& [k, m] : members_) m.conn->service(POLLOUT);
  if (code == 2) throw UsageError(message, hint);
  throw Error(message, hint);
}

void JobHub::letIn(const std::vector<pollfd>& fds) {
  std::vector<HubDoor::Entrant> entrants;
  std::vector<HubDoor::OtherVersion> others;
  door_->service(fds, entrants, others);
  for (auto& o : others) refuseVersion(std::move(o));
  for (auto& e : entrants) admit(std::move(e));
}

// A launcher of this job that runs another accel: no machine can train with it. Before the
// start the whole job ends (exit 2), as for any disagreement at the join; after it, only that
// launcher is turned away.
void JobHub::refuseVersion(HubDoor::OtherVersion o) {
  const std::string message =
      fmt::format("a launcher on {} ({}) speaks the job protocol of version {}, machine 0 ({}) speaks version {}",
                  o.hello.host, net::peerAddress(o.conn->fd()), o.hello.version, plan_.host, job::kProtocolVersion);
  const std::string hint = "install the same accel on every machine (`accel --version` there and here)";
  o.conn->send(job::encode(job::Refuse{job::kProtocolVersion, message, hint}));
  o.conn->service(POLLOUT);
  if (!started_) failJoin(message, hint, 2);
}

void JobHub::admit(HubDoor::Entrant e) {
  const std::string address = net::peerAddress(e.conn->fd());
  const bool asked = e.join.machine < 0;
  if (asked && !started_) e.join.machine = freeMachine(plan_, joined());
  if (auto refusal = refuseJoin(plan_, e.join, address, joined(), started_)) {
    e.conn->send(job::encode(job::Refuse{job::kProtocolVersion, refusal->problem, refusal->hint}));
    // Only this launcher is turned away after the start, or when it asked for a rank and every
    // rank is taken (one launcher too many, as a pod that came back); else the command lines disagree.
    if (started_ || asked) return;
    failJoin(refusal->problem, refusal->hint, 2);
  }
  members_.emplace(
      e.join.machine,
      Member{std::move(e.conn), {e.join.host, address, e.join.pid, {e.join.procs, e.join.role}, e.join.world}});
}

FindJoined JobHub::joined() const {
  return [this](int k) -> const Joined* {
    auto it = members_.find(k);
    return it == members_.end() ? nullptr : &it->second.who;
  };
}

}  // namespace accel::launch::job
