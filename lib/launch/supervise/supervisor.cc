// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/error.h"
#include "lib/common/process/adopted.h"
#include "lib/common/process/process_state.h"
#include "lib/common/process/signal_channel.h"
#include "lib/common/strings.h"
#include "lib/launch/console/console.h"
#include "lib/launch/console/terminal_input.h"
#include "lib/launch/job/job_link.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/supervise/error_file.h"
#include "lib/launch/supervise/flight_board.h"
#include "lib/launch/supervise/gpu_release.h"
#include "lib/launch/supervise/job_control.h"
#include "lib/launch/supervise/job_watch.h"
#include "lib/launch/supervise/launch_report.h"
#include "lib/launch/supervise/log_layout.h"
#include "lib/launch/supervise/progress_board.h"
#include "lib/launch/supervise/rank_answers.h"
#include "lib/launch/supervise/rank_arrivals.h"
#include "lib/launch/supervise/rank_stacks.h"
#include "lib/launch/supervise/worker_output.h"
#include "lib/launch/supervise/worker_process.h"
#include "lib/launch/supervise/worker_start.h"

namespace accel::launch::supervise {

namespace {

// After every worker exited: how long output pipes that something outside the job still holds
// open are read before the launcher stops waiting for them.
constexpr auto kLeftoverDrain = std::chrono::seconds(2);
using Clock = std::chrono::steady_clock;

class Supervisor {
 public:
  Supervisor(const settings::LaunchSettings& s, const facts::Facts& f, const plan::LaunchPlan& first)
      : settings_(s), facts_(f), plan_(first), report_(first, &console_), workers_(first.workers.size()) {}

  int run() {
    if (!plan_.log_dir.empty()) say(startRunLogs(plan_, error_files_, run_dir_));
    if (!plan_.rank_log_prefix.empty()) say(startRankLogs(plan_));
    process::SignalChannel signals;
    link_ = job::makeJobLink(plan_);
    answers_ = std::make_unique<RankAnswers>(workers_, *link_, plan_);
    if (std::string warning = answers_->listen(); !warning.empty()) say(warning);
    if (std::string warning = board_.open(plan_); !warning.empty()) say(warning);
    if (std::string warning = flights_.open(plan_); !warning.empty()) say(warning);
    stacks_ = std::make_unique<RankStacks>(workers_, *link_, plan_, run_dir_, flights_);
    watch_.open(run_dir_, *link_, *answers_);
    arrivals_ = std::make_unique<RankArrivals>(plan_, flights_, workers_);
    process::adoptOrphanedDescendants();  // best effort: without it, leftovers are only what's in the groups
    if (int code = link_->rendezvous(signals.fd())) {
      job::JobEvent interrupted = job::JobEvent::end(code, "interrupted while the machines joined");
      interrupted.signal = code - 128;
      watch_.story().ended(interrupted, code);
      return code;
    }
    watch_.story().rendezvousDone();
    joined_ = link_->layout();
    if (joined_) {  // a machine let into a running job starts at the job's round
      round_ = joined_->round;
      report_.setRound(round_, joined_->restarts);
    }
    if (joined_ || link_->firstPort()) rebuild(joined_ ? joined_->restarts : 0, link_->firstPort());
    for (;;) {
      startAll(round_);
      job::JobEvent decision = loop(signals.fd());
      if (decision.kind == job::JobEvent::Kind::End) {
        for (const auto& line : arrivals_->summary()) say(line);
        const int code = report_.end(decision, consequenceLine(consequence_), stoppedRanks(workers_, failed_));
        watch_.ended(decision, code, signals.fd());
        return code;
      }
      watch_.story().decided(decision);
      if (decision.failure) {
        report_.failure(decision.failure, consequenceLine(consequence_), stoppedRanks(workers_, failed_));
        say(fmt::format("restarting all workers (restart {} of {})", decision.restarts, plan_.max_restarts));
        if (!decision.message.empty()) say(decision.message);  // a machine asked to leave
      } else {
        say(decision.message);  // the machines changed: which, why, the new round
      }
      round_ = decision.round;
      report_.setRound(round_, decision.restarts);
      joined_ = link_->layout();
      std::vector<pid_t> previous;
      for (const auto& w : workers_) previous.push_back(w.pid);
      rebuild(decision.restarts, decision.port ? decision.port : plan_.master_port);
      if (std::string freed = awaitGpuRelease(plan_, previous, round_); !freed.empty()) say(freed);
      failed_ = consequence_ = nullptr;
      interrupt_ = interrupts_ = 0;
    }
  }

 private:
  const settings::LaunchSettings& settings_;
  const facts::Facts& facts_;
  // The round's plan: each round's is built anew (references to it see the new one).
  plan::LaunchPlan plan_;
  std::optional<job::JobLink::Layout> joined_;  // the layout machine 0 settled at the join
  std::string run_dir_;                         // this launch's folder in --log_dir ("" for none)
  console::Console console_;
  console::TerminalInput input_;
  LaunchReport report_;
  std::unique_ptr<job::JobLink> link_;
  std::unique_ptr<RankAnswers> answers_;
  std::unique_ptr<RankStacks> stacks_;
  std::unique_ptr<RankArrivals> arrivals_;
  ProgressBoard board_;
  FlightBoard flights_;
  JobWatch watch_{plan_, workers_, flights_, report_};
  int round_ = 0;
  std::vector<WorkerProcess> workers_;
  ErrorFiles error_files_;
  const WorkerProcess* failed_ = nullptr;       // first failure of this attempt
  const WorkerProcess* consequence_ = nullptr;  // seen first, but failed_ was SIGKILLed before
  int interrupt_ = 0;                           // first forwarded signal
  int interrupts_ = 0;
  bool stopping_ = false;
  std::optional<Clock::time_point> kill_at_;  // when survivors get SIGKILL; none once it was sent
  Clock::time_point started_ = Clock::now();

  double now() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

  // The plan of round round_, after `restarts` restarts, whose MASTER_PORT is `port`: built from
  // the settings and the facts with the round's layout as machine 0 settled it. Between rounds
  // only: no worker runs, so no worker's spec points into the plan being replaced.
  void rebuild(int restarts, int port) {
    plan::Round round{round_, port, std::nullopt, {}, restarts, ""};
    if (joined_) {
      report_.setMachine(joined_->machine);
      round.machine = joined_->machine;
      round.layout = joined_->shares;
      round.master_addr = joined_->master_addr;
    }
    plan_ = plan::build(settings_, facts_, round);
  }

  void say(const std::string& line) const { report_.say(line); }

  // All or none (worker_start.h).
  void startAll(int attempt) {
    started_ = Clock::now();
    stopping_ = false;
    kill_at_.reset();
    stacks_->released();
    arrivals_->newRound(attempt);
    flights_.newRound();
    const RoundStart round{attempt,
                           run_dir_,
                           answers_->socketName(),
                           board_.fd(),
                           flights_.fd(),
                           flights_.hookFolder(),
                           input_.foreground(),
                           watch_.forward()};
    watch_.roundStarts(attempt, plan_.restarts);
    const std::string warning = startWorkers(workers_, plan_, round, console_, error_files_);
    if (!warning.empty()) say(warning);
    for (const auto& w : workers_) {
      if (w.running) watch_.story().workerStarted(w);
    }
  }

  bool anyRunning() const {
    return std::any_of(workers_.begin(), workers_.end(), [](const WorkerProcess& w) { return w.running; });
  }

  static int soonest(int a, int b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); }

  // One round: until every worker of this machine exited and its output is read, and the job
  // (the link) decided what comes next: a restart, or the end.
  job::JobEvent loop(int signal_fd) {
    std::optional<Clock::time_point> all_exited;
    std::optional<job::JobEvent> decision;
    bool reported = false;
    for (;;) {
      if (!anyRunning() && !anyPipeOpen(workers_) && !reported) {
        // Adopted descendants that no longer held our pipes (a daemon redirects its output) end
        // with the round too; they are reaped by the next round's loop, or by init later.
        process::killAdoptedChildren(workerPids());
        reportRoundEnd();
        reported = true;
      }
      if (reported && decision) return *decision;
      int timeout = link_->timeoutMs();
      if (!anyRunning() && anyPipeOpen(workers_)) {
        if (!all_exited) {
          all_exited = Clock::now();
          for (const auto& w : workers_) signalGroup(w, SIGKILL);  // what they left in their groups
        }
        if (endLeftovers(*all_exited)) continue;
        timeout = soonest(timeout, 100);  // adopted descendants are looked for again (see endLeftovers)
      } else if (kill_at_) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at_ - Clock::now()).count();
        timeout = soonest(timeout, static_cast<int>(std::max<long long>(0, left)));
      }
      timeout = soonest(soonest(timeout, outputTimeoutMs(workers_, console_)), board_.pollMs());
      std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
      addOutputFds(workers_, input_, fds);
      link_->addPollFds(fds);
      answers_->addPollFds(fds, timeout);
      stacks_->addPollFds(fds, timeout);
      arrivals_->addPollFds(fds, timeout);
      watch_.addPollFds(fds, timeout);
      int n = ::poll(fds.data(), fds.size(), timeout);
      if (n < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", ::strerror(errno)));
      if (n < 0) continue;
      if (fds[0].revents & POLLIN) readSignals(signal_fd);
      if (serviceOutput(workers_, fds, input_, console_) | board_.advanced()) link_->progressed();
      answers_->service(fds);
      stacks_->service(fds);
      for (const auto& line : arrivals_->service(fds, *link_)) say(line);
      for (auto& event : link_->service(fds)) follow(event, decision);
      watch_.service(fds);
      if (kill_at_ && anyRunning() && Clock::now() >= *kill_at_) {
        killSurvivors(fmt::format("still running after {:g} s", plan_.grace_period));
      }
      if (stacks_->stopDue()) stopOthers(SIGTERM);
    }
  }

  // What the job says: stop (another machine failed), or what comes after this round; and the
  // questions about ranks that travel with it.
  void follow(job::JobEvent& event, std::optional<job::JobEvent>& decision) {
    if (answers_->follow(event)) return;
    if (watch_.follow(event)) return;
    if (event.kind == job::JobEvent::Kind::Arrivals) {
      for (const auto& line : arrivals_->follow(event)) say(line);
      return;
    }
    if (stacks_->follow(event, round_)) return report_.setStacks(stacks_->takeSummary());
    if (event.kind == job::JobEvent::Kind::Hold) {  // Ctrl-Z, or fg, on another machine
      say(event.stopped ? "the job was stopped on another machine: stopping this machine's workers"
                        : "the job continues: continuing this machine's workers");
      return holdWorkers(workers_, event.stopped);
    }
    if (decision && decision->kind == job::JobEvent::Kind::End) return;  // the first end is the job's
    if (event.kind != job::JobEvent::Kind::Stop) decision = event;
    if (event.kind == job::JobEvent::Kind::Restart) return;
    if (anyRunning() && !stopping_ && !failed_ && !interrupt_) {
      say(fmt::format("{}: stopping this machine's workers", event.message.empty() ? "the job ends" : event.message));
    }
    stopOthers(SIGTERM);
  }

  // The round is over on this machine: the local verdict, now with the whole stderr tail.
  void reportRoundEnd() {
    bool succeeded = !interrupt_;
    for (const auto& w : workers_) succeeded = succeeded && WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
    if (failed_) link_->workerFailed(failureOf(*failed_, plan_), true);
    watch_.roundEnds();
    link_->roundEnded(round_, succeeded, board_.savedStep());
  }

  std::vector<pid_t> workerPids() const {
    std::vector<pid_t> pids;
    for (const auto& w : workers_) pids.push_back(w.pid);
    if (stacks_->collectorPid() > 0) pids.push_back(stacks_->collectorPid());  // not a leftover
    if (arrivals_->lookPid() > 0) pids.push_back(arrivals_->lookPid());
    return pids;
  }

  // Every worker has exited but their output pipes are open: held by descendants that left the
  // workers' groups. Those re-parented to the launcher are killed, again each round (a killed
  // daemon's own children come to the launcher next). Past kLeftoverDrain, pipes that something
  // else still holds are closed unread; returns true then.
  bool endLeftovers(Clock::time_point all_exited) {
    process::killAdoptedChildren(workerPids());
    if (Clock::now() - all_exited < kLeftoverDrain) return false;
    for (const WorkerProcess* w : closeOpenPipes(workers_)) {
      say(
          fmt::format("warning: {}'s output is still held open by a process outside the job {} s after the "
                      "rank exited; not read further",
                      workerName(*w->spec), kLeftoverDrain.count()));
    }
    return true;
  }

  // SIGCONT: this launcher was stopped; the job link notices the gap (own_absence.h).
  void readSignals(int signal_fd) {
    signalfd_siginfo info;
    while (::read(signal_fd, &info, sizeof info) == sizeof info) {
      const int signal = static_cast<int>(info.ssi_signo);
      if (signal == SIGCHLD) {
        reap();
      } else if (process::isPassedOn(signal)) {
        say(fmt::format("received {}: forwarding it to every worker", process::signalName(signal)));
        passOn(workers_, signal);
      } else if (signal == SIGTSTP) {
        stopJobLikeCtrlZ(workers_, *link_, console_, input_);
      } else if (signal == SIGWINCH) {
        followResize(workers_, console_);
      } else if (signal != SIGCONT) {
        forward(signal);
      }
    }
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& w : workers_) {
        if (w.pid != pid || !w.running) continue;
        w.running = false;
        w.status = status;
        w.exited_at = now();
        watch_.story().workerExited(w);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        if (!failed_ && !interrupt_ && !w.stopped_by_us) {
          failed_ = &w;
          readWhatIsThere(w);  // its last words tell a collective's timeout
          const job::WorkerFailure failure = failureOf(w, plan_);
          if (!stacks_->holdStop(failure)) stopOthers(SIGTERM);  // else the job's Stop comes after the stacks
          link_->workerFailed(failure, false);
        } else if (failed_ && !consequence_ && w.killedFromOutside() && WIFEXITED(failed_->status) &&
                   w.exited_at - failed_->exited_at < job::kKilledFirstWindow) {
          consequence_ = failed_;
          failed_ = &w;
        }
      }
    }
  }

  void stopOthers(int signal) {
    stacks_->released();
    for (auto& w : workers_) {
      if (!w.running) continue;
      w.stopped_by_us = true;
      signalGroup(w, signal);
      if (signal != SIGKILL) signalGroup(w, SIGCONT);  // a stopped worker handles it now, not after the grace period
    }
    if (!stopping_) {
      stopping_ = true;
      kill_at_ = Clock::now() + defaults::fromSeconds(plan_.grace_period);
    }
  }

  void forward(int signal) {
    ++interrupts_;
    if (!interrupt_) {
      interrupt_ = signal;
      link_->interrupted(signal);
    }
    if (signal == SIGINT && interrupts_ > 1) {
      say("second interrupt: killing all workers");
      return killSurvivors("still running at the second interrupt");
    }
    say(fmt::format("received {}: forwarding it to every worker", process::signalName(signal)));
    stopOthers(signal);
  }

  void killSurvivors(const std::string& why) {
    for (auto& w : workers_) {
      if (w.running) {
        say(fmt::format("{} (pid {}) {}: sending SIGKILL", workerName(*w.spec), w.pid, why));
        w.sigkilled_by_us = true;
        signalGroup(w, SIGKILL);
      }
    }
    kill_at_.reset();
  }
};

}  // namespace

int superviseWorkers(const settings::LaunchSettings& s, const facts::Facts& f, const plan::LaunchPlan& first) {
  return Supervisor(s, f, first).run();
}

}  // namespace accel::launch::supervise
