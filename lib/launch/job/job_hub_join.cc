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
#include "lib/common/strings.h"
#include "lib/launch/job/job_hub.h"

namespace accel::launch::job {

using Clock = std::chrono::steady_clock;

int JobHub::rendezvous(int signal_fd) {
  const auto deadline = Clock::now() + defaults::fromSeconds(plan_.join_timeout);
  while (!readyForRound()) {
    if (Clock::now() >= deadline) failJoin(plan_.dynamic ? tooFewMachines() : missingMachines(plan_, joined()));
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
  if (plan_.dynamic) return formRound("", std::nullopt);
  Settled settled = settleLayout(plan_, joined());
  if (settled.refusal) failJoin(settled.refusal->problem, settled.refusal->hint, 2);
  for (auto& [k, m] : members_) {
    m.conn->send(job::encode(job::Start{job::kProtocolVersion, plan_.master_port, k, settled.layout}));
  }
  layout_ = Layout{0, std::move(settled.layout), 0, 0, ""};
  for (auto& [k, m] : members_) m.started = true;
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

// "only 1 machine of at least 2 (--nnodes 2:4) joined within 600 s (machine 0 on a; …)".
std::string JobHub::tooFewMachines() const {
  std::vector<std::string> here = {fmt::format("machine 0 on {}", plan_.host)};
  for (const auto& [k, m] : members_) here.push_back(fmt::format("{} ({})", m.who.host, m.who.address));
  for (const auto& m : waiting_) here.push_back(fmt::format("{} ({})", m.who.host, m.who.address));
  return fmt::format(
      "only {} machine{} of at least {} (--nnodes {}:{}) joined within {:g} s ({}); check that `accel "
      "launch` runs on the others with --rdzv_endpoint {}:{}",
      here.size(), here.size() > 1 ? "s" : "", plan_.min_machines, plan_.min_machines, plan_.max_machines,
      plan_.join_timeout, join(here, ", "), plan_.master_addr, plan_.main_process_port);
}

void JobHub::admit(HubDoor::Entrant e) {
  const std::string address = net::peerAddress(e.conn->fd());
  if (plan_.dynamic) return admitDynamic(std::move(e), address);
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

// Machine 0 gives out the ranks: a launcher whose command line fits takes the next free rank
// before the first round, else waits for one (admitLater).
void JobHub::admitDynamic(HubDoor::Entrant e, const std::string& address) {
  job::Join shape = e.join;
  shape.machine = 1;  // its rank is machine 0's to give: only the job's shape is checked
  if (auto refusal = refuseJoin(
          plan_, shape, address, [](int) { return nullptr; }, false)) {
    e.conn->send(job::encode(job::Refuse{job::kProtocolVersion, refusal->problem, refusal->hint}));
    e.conn->service(POLLOUT);
    if (!started_) failJoin(refusal->problem, refusal->hint, 2);  // the command lines disagree
    return;
  }
  const int k = started_ ? -1 : freeMachine(plan_, joined());
  if (k < 0) return admitLater(std::move(e), address);
  members_.emplace(
      k, Member{std::move(e.conn), {e.join.host, address, e.join.pid, {e.join.procs, e.join.role}, e.join.world}});
}

FindJoined JobHub::joined() const {
  return [this](int k) -> const Joined* {
    auto it = members_.find(k);
    return it == members_.end() ? nullptr : &it->second.who;
  };
}

}  // namespace accel::launch::job
