// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/job_hub.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/process/signal_channel.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/common/write_fully.h"

namespace accel::launch::job {

namespace {

using Clock = std::chrono::steady_clock;

HubDoor::Note stderrNote() {
  return [](const std::string& line) { writeFully(2, "accel: " + line + "\n"); };
}

}  // namespace

JobHub::JobHub(const plan::LaunchPlan& plan, HubDoor::Limits limits, HubDoor::Note note,
               std::optional<Continuation> continuation)
    : plan_(plan),
      round_(continuation ? continuation->round : 0),
      expected_(continuation ? continuation->expected : 0),
      restarts_(continuation ? continuation->restarts : 0),
      say_(note ? note : stderrNote()),
      absence_(plan.heartbeat_timeout, "machine 0"),
      hang_(plan.hang_timeout) {
  std::string error;
  int error_number = 0;
  listen_fd_ = net::listenTcp("", plan.job_port, error, error_number);
  if (listen_fd_ < 0) {
    throw Error(fmt::format("machine 0 cannot listen on the job port {}: {}", plan.job_port, error),
                "the job channel between the machines' launchers uses that port: free it, or pass "
                "--job_port (the same on every machine)");
  }
  door_ = std::make_unique<HubDoor>(listen_fd_, plan.token, limits, say_);
}

JobHub::~JobHub() {
  door_.reset();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

int JobHub::port() const { return net::boundPort(listen_fd_); }

void JobHub::addPollFds(std::vector<pollfd>& fds) const {
  door_->addPollFds(fds);
  for (const auto& [k, m] : members_) {
    if (m.conn->open()) fds.push_back(m.conn->pollFd());
  }
  for (const auto& m : waiting_) {
    if (m.conn->open()) fds.push_back(m.conn->pollFd());
  }
}

int JobHub::timeoutMs() const {
  if (!queued_.empty() || due_) return 0;
  int soonest = static_cast<int>(heartbeatInterval(plan_.heartbeat_timeout).count());
  for (int t : {door_->timeoutMs(), gatherings_.timeoutMs(), started_ ? hang_.timeoutMs() : -1}) {
    if (t >= 0) soonest = std::min(soonest, t);
  }
  if (enough_since_ || short_since_) soonest = std::min(soonest, 100);  // the last call, the join timeout
  return soonest;
}

std::vector<JobEvent> JobHub::service(const std::vector<pollfd>& fds) {
  absence_.tick();
  letIn(fds);
  for (auto& [machine, m] : members_) {
    if (!m.conn->open()) continue;
    for (const auto& p : fds) {
      if (p.fd == m.conn->fd() && p.revents) readMember(machine, m, p.revents);
    }
    heartbeat(machine, m);
  }
  serviceWaiting(fds);
  checkShortOfMachines();
  if (due_) {
    const DueRound round = *due_;
    due_.reset();
    formRound(round.why, round.failure);
  }
  watchForHang();
  finishGatherings();
  return std::exchange(queued_, {});
}

void JobHub::ask(long long id, int rank) { route(0, id, rank); }
void JobHub::tell(long long id, const std::string& text) { answered(id, text); }

// Sends the question on to the machine that runs `rank` (this one: an Ask event), remembering
// who asked.
void JobHub::route(int asker, long long their_id, int rank) {
  if (rank < 0 || rank >= plan_.world_size) {
    return deliver(asker, their_id,
                   fmt::format("rank {} is not in this job (ranks 0 to {})", rank, plan_.world_size - 1));
  }
  const int k = plan::machineOfRank(plan_, rank);
  auto it = members_.find(k);
  if (k != 0 && (it == members_.end() || it->second.lost || !it->second.conn->open())) {
    return deliver(asker, their_id,
                   fmt::format("rank {} runs on machine {}, whose launcher machine 0 no longer hears", rank, k));
  }
  const long long id = routes_.add(asker, their_id);
  if (k == 0) return queued_.push_back(JobEvent::ask(id, rank));
  it->second.conn->send(job::encode(job::Ask{id, rank}));
}

void JobHub::deliver(int asker, long long their_id, const std::string& text) {
  if (asker == 0) return queued_.push_back(JobEvent::answer(their_id, text));
  auto it = members_.find(asker);
  if (it != members_.end() && it->second.conn->open()) it->second.conn->send(job::encode(job::Tell{their_id, text}));
}

void JobHub::answered(long long id, const std::string& text) {
  if (auto r = routes_.take(id)) deliver(r->asker, r->their_id, text);  // else: the asker gave up long ago
}

void JobHub::workerFailed(const WorkerFailure& failure, bool replaces) { onFailure(failure, replaces); }
void JobHub::interrupted(int signal) { onInterrupt(signal, 0); }
void JobHub::hold(bool stopped) { onHold({stopped, 0}); }

void JobHub::onHold(const job::Hold& hold) {
  held_ = hold.stopped;
  hang_.hold(held_);
  if (!held_) absence_.resumed();
  const std::string line = job::encode(hold);
  for (auto& [k, m] : members_) {
    if (k != hold.machine) m.conn->send(line);
  }
  if (hold.machine != 0) queued_.push_back(JobEvent::hold(hold.stopped));
}
void JobHub::roundEnded(int, bool succeeded, long long saved_step) {
  self_ended_ = true;
  self_ok_ = succeeded;
  saved_ = std::max(saved_, saved_step);
  decideIfEnded();
}

double JobHub::roundSeconds() const { return std::chrono::duration<double>(Clock::now() - round_started_).count(); }

// To this round's machines; an end also to the ones waiting for a round.
void JobHub::broadcast(const job::Message& message) {
  const std::string line = job::encode(message);
  for (auto& [k, m] : members_) m.conn->send(line);
  if (!std::holds_alternative<job::End>(message)) return;
  for (auto& m : waiting_) m.conn->send(line);
}

// A line a launcher of this job sent: one that cannot be read means that launcher is broken,
// and it is lost as if it had vanished, naming what was wrong.
void JobHub::readMember(int machine, Member& m, short revents) {
  const auto lines = m.conn->service(revents);
  if (m.lost) return;  // back after it was counted as lost: nothing it says counts now
  for (const auto& line : lines) {
    std::string error;
    auto message = job::decode(line, error);
    if (!message) {
      m.conn->close();
      return onLost(machine, m, "its launcher sent a message machine 0 cannot read: " + error);
    }
    onMessage(machine, m, *message);
    if (m.lost) return;
  }
}

void JobHub::onMessage(int machine, Member& m, const job::Message& message) {
  if (auto* f = std::get_if<job::Failed>(&message)) {
    onFailure(f->failure, f->replaces);
  } else if (auto* i = std::get_if<job::Interrupted>(&message)) {
    onInterrupt(i->signal, machine);
  } else if (auto* e = std::get_if<job::Ended>(&message); e && e->round == round_) {
    m.ended = true;
    m.ok = e->ok;
    saved_ = std::max(saved_, e->saved);
    decideIfEnded();
  } else if (auto* a = std::get_if<job::Ask>(&message)) {
    route(machine, a->id, a->rank);
  } else if (auto* t = std::get_if<job::Tell>(&message)) {
    answered(t->id, t->text);
  } else if (auto* h = std::get_if<job::Hold>(&message)) {
    onHold({h->stopped, machine});
  } else if (std::holds_alternative<job::Progress>(message)) {
    hang_.progress();
  } else if (std::holds_alternative<job::StacksWanted>(message) || std::holds_alternative<job::StackPart>(message) ||
             std::holds_alternative<job::StacksDone>(message)) {
    onStacksMessage(machine, message);
  } else if (std::holds_alternative<job::ArrivalsSent>(message) || std::holds_alternative<job::ClockEcho>(message)) {
    onArrivals(m, message);
  } else if (auto* ev = std::get_if<job::EventSent>(&message)) {
    queued_.push_back(JobEvent::event(ev->line));
  } else if (auto* lg = std::get_if<job::LogsSent>(&message)) {
    JobEvent logs;
    logs.kind = JobEvent::Kind::Logs;
    logs.rank = machine;
    logs.message = m.who.host;
    logs.logs = std::make_shared<const LogChunk>(lg->chunk);
    queued_.push_back(std::move(logs));
  } else if (auto* st = std::get_if<job::StatusSent>(&message)) {
    m.status = st->json;
    m.status_at = std::chrono::steady_clock::now();
  } else if (auto* sq = std::get_if<job::StatusAsked>(&message)) {
    JobEvent asked;
    asked.kind = JobEvent::Kind::StatusAsked;
    asked.id = sq->id;
    asked.rank = machine;
    queued_.push_back(std::move(asked));
  } else if (!std::holds_alternative<job::Heartbeat>(message) && !std::holds_alternative<job::Ended>(message)) {
    m.conn->close();
    onLost(machine, m, fmt::format("its launcher sent a '{}', which only machine 0 sends", job::kindName(message)));
  }
}

// A member silent for the heartbeat timeout is lost; its connection stays open, so that the
// verdict still reaches it should it come back.
void JobHub::heartbeat(int machine, Member& m) {
  if (finished_ || m.lost) return;  // the verdict is out: members close their connections as they exit
  if (!m.conn->open()) return onLost(machine, m, "its launcher's connection closed (" + m.conn->error() + ")");
  const auto timeout = defaults::fromSeconds(plan_.heartbeat_timeout);
  if (Clock::now() - m.conn->lastSent() >= heartbeatInterval(plan_.heartbeat_timeout)) {
    m.conn->send(job::encode(job::Heartbeat{}));
  }
  probeClock(m);
  if (held_ || absence_.silence(*m.conn) < timeout) return;
  readMember(machine, m, POLLIN);  // what arrived while this launcher was away counts first
  if (m.lost || !m.conn->open() || absence_.silence(*m.conn) < timeout) return;
  onLost(machine, m, fmt::format("no word from its launcher for {:g} s", plan_.heartbeat_timeout));
}

void JobHub::onLost(int machine, Member& m, const std::string& why) {
  m.lost = true;
  if (plan_.dynamic && started_) {  // the next round is formed without it
    gatherings_.lost(machine);
    if (regroup_.empty())
      regroup_ = fmt::format("machine {} ({}, {}) was lost: {}", machine, m.who.host, m.who.address, why);
    stopAll(regroup_);
    return decideIfEnded();
  }
  if (!started_) {
    queued_.push_back(JobEvent::end(1, fmt::format("machine {} ({}, {}) left before the job started: {}", machine,
                                                   m.who.host, m.who.address, why)));
    return;
  }
  gatherings_.lost(machine);
  if (lost_.empty() && ledger_.empty() && !signal_) {
    lost_ = fmt::format("machine {} ({}, {}) was lost: {}", machine, m.who.host, m.who.address, why);
    lost_hint_ = absence_.hint();
    if (lost_hint_.empty()) {
      lost_hint_ = "its launcher was killed, or its host or network went down; its workers were not seen to fail";
    }
  } else if (lost_.empty()) {
    lost_ =
        fmt::format("machine {} ({}, {}) was lost while the job stopped: {}", machine, m.who.host, m.who.address, why);
  }
  stopAfterStacks(lost_);
  decideIfEnded();
}

// A failure that reads like a collective's timeout stops the job once every rank's stack is read
// (its machine's supervisor holds its own stop for this one); any other stops it at once.
void JobHub::onFailure(const WorkerFailure& failure, bool replaces) {
  ledger_.add(failure, replaces, roundSeconds());
  if (replaces) return;
  const std::string why = fmt::format("{} {}", describeWorker(failure), failure.exit_text);
  if (timedOutInCollective(failure)) return stopAfterStacks(why);
  stopAll(why);
}

void JobHub::onInterrupt(int signal, int machine) {
  if (!signal_) signal_ = signal;
  const char* name = ::sigabbrev_np(signal);
  stopAll(fmt::format("SIG{} on machine {}", name ? name : std::to_string(signal).c_str(), machine));
}

// Tells every machine, this one too, to stop its workers (once a round).
void JobHub::stopAll(const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  broadcast(job::Stop{round_, why});
  queued_.push_back(JobEvent::stop(round_, why));
}

void JobHub::decideIfEnded() {
  if (!self_ended_) return;
  bool all_ok = self_ok_;
  for (const auto& [k, m] : members_) {
    if (!m.ended && !m.lost) return;
    all_ok = all_ok && m.ok && (!m.lost || (plan_.dynamic && m.ended));  // finished, then gone: it did its share
  }
  if (short_since_ || finished_ || due_) return;
  if (plan_.dynamic && !all_ok && !signal_ && !regroup_.empty()) return regroup();
  const double seconds = ledger_.empty() ? roundSeconds() : ledger_.first().seconds;
  JobEvent e = decideRound(
      round_, restarts_, plan_.max_restarts,
      {all_ok, signal_, lost_, lost_hint_, hung_, HangWatch::hint(hung_), &ledger_, seconds, saved_}, policy_);
  if (e.kind == JobEvent::Kind::Restart) {  // a fresh store port; the same machines, or one asked to leave
    restarts_ = e.restarts;
    const std::string left = plan_.dynamic ? askToLeave(e.failure) : "";
    return void(due_ = DueRound{left.empty() ? e.message : left, e.failure});
  }
  broadcast(job::End{e.exit_code, e.signal, e.message, e.hint, e.failure});
  finished_ = true;
  queued_.push_back(std::move(e));
}

}  // namespace accel::launch::job
