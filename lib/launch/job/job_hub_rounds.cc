// SPDX-License-Identifier: Apache-2.0
// JobHub's rounds where machines come and go (job_hub.h, plan.dynamic): when a round may start,
// who is in it, the machines that wait, and what a lost or new machine does to the running one.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/launch/job/job_hub.h"
#include "lib/launch/plan/plan_layout.h"

namespace accel::launch::job {

using Clock = std::chrono::steady_clock;

int JobHub::survivors() const {
  return static_cast<int>(
      std::count_if(members_.begin(), members_.end(), [](const auto& m) { return !m.second.lost; }));
}

// The first round: MAX machines, or MIN once the last call passed since the MIN-th joined.
bool JobHub::readyForRound() {
  if (!plan_.dynamic) return static_cast<int>(members_.size()) >= plan_.max_machines - 1;
  const int here = 1 + survivors() + static_cast<int>(waiting_.size());
  if (here >= plan_.max_machines || (expected_ > 0 && here >= std::max(expected_, plan_.min_machines))) return true;
  if (here < plan_.min_machines) return void(enough_since_.reset()), false;
  if (!enough_since_) enough_since_ = Clock::now();
  return Clock::now() - *enough_since_ >= defaults::fromSeconds(plan_.last_call_timeout);
}

// "round 2: 3 machines (a, b, c), world size 6; spares: d".
std::string JobHub::roundLine(const std::string& why) const {
  std::vector<std::string> hosts = {plan_.host}, spares;
  for (const auto& [k, m] : members_) hosts.push_back(m.who.host);
  for (const auto& m : waiting_) spares.push_back(m.who.host);
  const int world = layout_ ? plan::worldOf(layout_->shares) : 0;
  return fmt::format("{}round {}: {} machine{} ({}), world size {}{}", why.empty() ? "" : why + "; ", round_,
                     hosts.size(), hosts.size() > 1 ? "s" : "", join(hosts, ", "), world,
                     spares.empty() ? "" : "; spares: " + join(spares, ", "));
}

// The next round, from the machines still here (in their order) and then the waiting ones, up to
// MAX; each hears its rank in it: a Start for its first round, a Restart for the later ones.
void JobHub::formRound(const std::string& why, const std::optional<WorkerFailure>& failure) {
  const bool first = !started_;
  const int port = first && !plan_.etcd ? plan_.master_port : net::probePort(0);
  if (port < 0) {
    JobEvent e = JobEvent::end(
        1, fmt::format("machine 0 ({}) found no free TCP port for round {}'s store", plan_.host, round_ + 1),
        "free some ports on machine 0 (see `ss -tan`), then launch again");
    e.failure = failure;
    broadcast(job::End{e.exit_code, 0, e.message, e.hint, e.failure});
    finished_ = true;
    return queued_.push_back(std::move(e));
  }
  std::map<int, Member> next;
  int k = 1;
  for (auto& [old, m] : members_) {
    if (!m.lost && k < plan_.max_machines) next.emplace(k++, std::move(m));
  }
  for (; k < plan_.max_machines && !waiting_.empty(); waiting_.erase(waiting_.begin())) {
    next.emplace(k++, std::move(waiting_.front()));
  }
  members_ = std::move(next);
  if (!first) ++round_;
  round_port_ = port;
  std::vector<plan::MachineShare> shares = {{static_cast<int>(plan_.workers.size()), plan_.role}};
  for (const auto& [n, m] : members_) shares.push_back(m.who.share);
  layout_ = Layout{0, shares, round_, restarts_, ""};
  const std::string line = failure && why.empty() ? "" : roundLine(why);
  for (auto& [n, m] : members_) {
    m.ended = m.ok = false;
    if (m.started) {
      m.conn->send(job::encode(job::Restart{round_, port, failure, restarts_, line, n, shares}));
    } else {
      m.conn->send(job::encode(job::Start{job::kProtocolVersion, port, n, shares, round_, restarts_}));
    }
    m.started = true;
  }
  started_ = true;
  stopping_ = self_ended_ = false;
  ledger_.clear();
  regroup_.clear();
  lost_.clear();
  hung_.clear();
  enough_since_.reset();
  short_since_.reset();
  round_started_ = Clock::now();
  hang_.restart();
  if (first) return say_(line);
  JobEvent e = JobEvent::restart(round_, port);
  e.restarts = restarts_;
  e.failure = failure;
  e.message = line;
  queued_.push_back(std::move(e));
}

// A launcher of this job that joins while a round runs waits for the next; it ends the running
// one where that has fewer than MAX machines (torchrun's scale-up), else it is a spare.
void JobHub::admitLater(HubDoor::Entrant e, const std::string& address) {
  Joined who{e.join.host, address, e.join.pid, {e.join.procs, e.join.role}, e.join.world};
  waiting_.push_back(Member{std::move(e.conn), std::move(who)});
  const Joined& w = waiting_.back().who;
  if (!started_ || finished_) return;
  if (short_since_) return checkShortOfMachines();
  if (1 + survivors() < plan_.max_machines && regroup_.empty() && !stopping_) {
    regroup_ = fmt::format("{} ({}) joined", w.host, w.address);
    return stopAll(regroup_ + ": ending round " + std::to_string(round_) + " to form one with it");
  }
  say_(
      fmt::format("{} ({}) joined as a spare: round {} has the most machines ({}); it takes the place of a machine "
                  "that is lost",
                  w.host, w.address, round_, plan_.max_machines));
}

// The waiting launchers: heard (heartbeats both ways), and let go when they leave.
void JobHub::serviceWaiting(const std::vector<pollfd>& fds) {
  const auto timeout = defaults::fromSeconds(plan_.heartbeat_timeout);
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    LineConnection& c = *it->conn;
    for (const auto& p : fds) {
      if (c.open() && p.fd == c.fd() && p.revents) c.service(p.revents);  // a waiting launcher only beats
    }
    if (c.open() && Clock::now() - c.lastSent() >= heartbeatInterval(plan_.heartbeat_timeout)) {
      c.send(job::encode(job::Heartbeat{}));
    }
    const bool silent = !held_ && absence_.silence(c) >= timeout;
    if (c.open() && !silent) {
      ++it;
      continue;
    }
    say_(fmt::format("{} ({}), waiting for a round, left: {}", it->who.host, it->who.address,
                     c.open() ? fmt::format("no word from it for {:g} s", plan_.heartbeat_timeout)
                              : "its connection closed (" + c.error() + ")"));
    it = waiting_.erase(it);
  }
}

// Once every machine of a round that lost or gained one ended: the next round now, or once
// enough machines are here.
void JobHub::regroup() {
  if (1 + survivors() + static_cast<int>(waiting_.size()) >= plan_.min_machines) {
    due_ = DueRound{regroup_, std::nullopt};
    return;
  }
  if (short_since_) return;
  short_since_ = Clock::now();
  say_(
      fmt::format("{}: {} machine{} left, fewer than the job's {} (--nnodes {}:{}); waiting up to {:g} s "
                  "(join_timeout) for machines",
                  regroup_, 1 + survivors(), survivors() ? "s" : "", plan_.min_machines, plan_.min_machines,
                  plan_.max_machines, plan_.join_timeout));
}

// A restart after `failure`: the machine whose workers failed first in --max_machine_failures
// rounds in a row is told to leave, where MIN machines remain without it. Returns the line that
// says so, or "".
std::string JobHub::askToLeave(const std::optional<WorkerFailure>& failure) {
  if (!failure) return "";
  auto it = members_.find(failure->machine);
  const std::string id = it == members_.end() || failure->machine == 0
                             ? "machine 0"
                             : fmt::format("{} pid {}", it->second.who.host, it->second.who.pid);
  if (!policy_.failedAgain(id) || it == members_.end() || failure->machine == 0) return "";
  if (survivors() + static_cast<int>(waiting_.size()) < plan_.min_machines) return "";  // 1 + survivors - 1
  Member& m = it->second;
  const std::string why = fmt::format("machine {} ({}, {}) was asked to leave: {}", failure->machine, m.who.host,
                                      m.who.address, policy_.leaveReason());
  m.conn->send(
      job::encode(job::End{1, 0, why, "the job goes on without it; look at its workers' failures above", failure}));
  m.conn->service(POLLOUT);
  m.lost = true;
  say_(why);
  return why;
}

// Between rounds with fewer than MIN machines: the next round once enough joined (and the last
// call passed, or MAX are here); the end after join_timeout.
void JobHub::checkShortOfMachines() {
  if (!short_since_ || finished_ || due_) return;
  if (readyForRound()) return void(due_ = DueRound{regroup_, std::nullopt});
  if (Clock::now() - *short_since_ < defaults::fromSeconds(plan_.join_timeout)) return;
  JobEvent e = JobEvent::end(
      1,
      fmt::format("{}, and only {} machine{} of the job's minimum {} (--nnodes {}:{}) came within {:g} s "
                  "(join_timeout)",
                  regroup_, 1 + survivors() + waiting_.size(), survivors() + waiting_.size() ? "s" : "",
                  plan_.min_machines, plan_.min_machines, plan_.max_machines, plan_.join_timeout),
      "start launchers on more machines with the same command, lower MIN, or raise --rdzv_conf join_timeout");
  broadcast(job::End{e.exit_code, 0, e.message, e.hint, std::nullopt});
  finished_ = true;
  queued_.push_back(std::move(e));
}

}  // namespace accel::launch::job
