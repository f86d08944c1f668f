// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/adopted.h"
#include "lib/launch/signal_channel.h"
#include "lib/launch/worker_process.h"

namespace accel {

namespace {

constexpr size_t kSummaryLines = 20;
// A worker killed by a SIGKILL that the launcher did not send (the OOM killer, `kill -9`) cannot
// have died as a consequence of another rank's failure, but its sockets close before its exit
// can be reaped: a peer may exit over the broken connection and be seen first. Seen within this
// long of a failure that ended with an exit code, the killed worker is named as the first.
constexpr double kKilledFirstWindow = 0.5;
// After every worker exited: how long output pipes that something outside the job still holds
// open are read before the launcher stops waiting for them.
constexpr auto kLeftoverDrain = std::chrono::seconds(2);
using Clock = std::chrono::steady_clock;

void say(const std::string& line) { writeFully(2, "accel: " + line + "\n"); }

int openLog(const std::string& dir, int rank, const char* stream, int attempt) {
  if (dir.empty()) return -1;
  std::string path = fmt::format("{}/rank{}.{}.log", dir, rank, stream);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot open log file {}: {}", path, ::strerror(errno)));
  if (attempt > 0) writeFully(fd, fmt::format("=== accel: restart {} ===\n", attempt));
  return fd;
}

class Supervisor {
 public:
  explicit Supervisor(const LaunchPlan& plan) : plan_(plan), workers_(plan.workers.size()) {}

  int run() {
    if (!plan_.log_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(plan_.log_dir, ec);
      if (ec) throw Error("cannot create --log_dir " + plan_.log_dir + ": " + ec.message());
    }
    SignalChannel signals;
    adoptOrphanedDescendants();  // best effort: without it, leftovers are only what's in the groups
    for (int attempt = 0;; ++attempt) {
      startAll(attempt);
      loop(signals.fd());
      if (interrupt_) return interrupted();
      if (!failed_) return 0;
      if (attempt >= plan_.max_restarts) return failedExit();
      summarise();
      say(fmt::format("restarting all workers (restart {} of {})", attempt + 1, plan_.max_restarts));
      failed_ = nullptr;
      consequence_ = nullptr;
    }
  }

 private:
  const LaunchPlan& plan_;
  std::vector<WorkerProcess> workers_;
  const WorkerProcess* failed_ = nullptr;  // first failure of this attempt
  const WorkerProcess* consequence_ = nullptr;  // seen first, but failed_ was SIGKILLed before
  int interrupt_ = 0;                      // first forwarded signal
  int interrupts_ = 0;
  bool stopping_ = false;
  std::optional<Clock::time_point> kill_at_;  // when survivors get SIGKILL; none once it was sent
  Clock::time_point started_ = Clock::now();

  double now() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

  // "rank 3", or the label of a process that runs several ranks (mpirun).
  static std::string who(const WorkerSpec& spec) {
    return spec.label.empty() ? fmt::format("rank {}", spec.rank) : spec.label;
  }

  std::string prefix(const WorkerSpec& spec) const {
    return plan_.label_host.empty() ? fmt::format("[{}] ", who(spec)) : fmt::format("[{}:{}] ", plan_.label_host, who(spec));
  }

  int consoleFd(const WorkerSpec& spec, int stream_bit, int fd) const {
    if (!plan_.console_ranks.empty() && !plan_.console_ranks.count(spec.local_rank)) return -1;
    auto it = plan_.console_streams_by_rank.find(spec.local_rank);
    int streams = it != plan_.console_streams_by_rank.end() ? it->second : plan_.console_streams;
    return (streams & stream_bit) ? fd : -1;
  }

  // All or none: when one worker cannot be started, those already running are killed (their
  // whole process groups) and reaped before the error goes up.
  void startAll(int attempt) {
    stopping_ = false;
    kill_at_.reset();
    try {
      for (size_t i = 0; i < workers_.size(); ++i) {
        WorkerProcess& w = workers_[i];
        w.spec = &plan_.workers[i];
        const std::string p = prefix(*w.spec);
        w.out = std::make_unique<OutputStream>(p, consoleFd(*w.spec, 1, 1), openLog(plan_.log_dir, w.spec->rank, "stdout", attempt), 0);
        w.err = std::make_unique<OutputStream>(p, consoleFd(*w.spec, 2, 2), openLog(plan_.log_dir, w.spec->rank, "stderr", attempt), kSummaryLines);
        spawnWorker(w, attempt);
      }
    } catch (...) {
      for (auto& w : workers_) {
        if (!w.running) continue;
        signalGroup(w, SIGKILL);
        ::waitpid(w.pid, nullptr, 0);
        w.running = false;
      }
      throw;
    }
  }

  bool anyRunning() const {
    for (const auto& w : workers_) {
      if (w.running) return true;
    }
    return false;
  }

  bool anyPipeOpen() const {
    for (const auto& w : workers_) {
      if (w.out_fd >= 0 || w.err_fd >= 0) return true;
    }
    return false;
  }

  void loop(int signal_fd) {
    std::optional<Clock::time_point> all_exited;
    while (anyRunning() || anyPipeOpen()) {
      int timeout = -1;
      if (!anyRunning()) {
        if (!all_exited) {
          all_exited = Clock::now();
          for (const auto& w : workers_) signalGroup(w, SIGKILL);  // what they left in their groups
        }
        if (endLeftovers(*all_exited)) break;
        timeout = 100;  // adopted descendants are looked for again (see endLeftovers)
      } else if (kill_at_) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at_ - Clock::now()).count();
        timeout = static_cast<int>(std::max<long long>(0, left));
      }
      std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
      for (const auto& w : workers_) {
        if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0});
        if (w.err_fd >= 0) fds.push_back({w.err_fd, POLLIN, 0});
      }
      int n = ::poll(fds.data(), fds.size(), timeout);
      if (n < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", ::strerror(errno)));
      if (fds[0].revents & POLLIN) readSignals(signal_fd);
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) drain(fds[i].fd);
      }
      if (kill_at_ && anyRunning() && Clock::now() >= *kill_at_) {
        killSurvivors(fmt::format("still running after {:g} s", plan_.grace_period));
      }
    }
    // Adopted descendants that no longer held our pipes (a daemon redirects its output) end with
    // the job too; they are reaped by the next attempt's loop, or by init after the launcher.
    killAdoptedChildren(workerPids());
  }

  std::vector<pid_t> workerPids() const {
    std::vector<pid_t> pids;
    for (const auto& w : workers_) pids.push_back(w.pid);
    return pids;
  }

  // Every worker has exited but their output pipes are open: held by descendants that left the
  // workers' groups. Those re-parented to the launcher are killed, again each round (a killed
  // daemon's own children come to the launcher next). Past kLeftoverDrain, pipes that something
  // else still holds are closed unread; returns true then.
  bool endLeftovers(Clock::time_point all_exited) {
    killAdoptedChildren(workerPids());
    if (Clock::now() - all_exited < kLeftoverDrain) return false;
    for (auto& w : workers_) {
      if (w.out_fd < 0 && w.err_fd < 0) continue;
      say(fmt::format("warning: {}'s output is still held open by a process outside the job {} s after the "
                      "rank exited; not read further", who(*w.spec), kLeftoverDrain.count()));
      for (int* fd : {&w.out_fd, &w.err_fd}) {
        if (*fd < 0) continue;
        (fd == &w.out_fd ? w.out : w.err)->finish();
        ::close(*fd);
        *fd = -1;
      }
    }
    return true;
  }

  void drain(int fd) {
    for (auto& w : workers_) {
      if (fd != w.out_fd && fd != w.err_fd) continue;
      OutputStream& stream = fd == w.out_fd ? *w.out : *w.err;
      char buffer[65536];
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        stream.feed(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        stream.finish();
        ::close(fd);
        (fd == w.out_fd ? w.out_fd : w.err_fd) = -1;
      }
      return;
    }
  }

  void readSignals(int signal_fd) {
    signalfd_siginfo info;
    while (::read(signal_fd, &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGCHLD) {
        reap();
      } else {
        forward(static_cast<int>(info.ssi_signo));
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
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        if (!failed_ && !interrupt_ && !w.stopped_by_us) {
          failed_ = &w;
          stopOthers(SIGTERM);
        } else if (failed_ && !consequence_ && killedFromOutside(w) && WIFEXITED(failed_->status) &&
                   w.exited_at - failed_->exited_at < kKilledFirstWindow) {
          consequence_ = failed_;
          failed_ = &w;
        }
      }
    }
  }

  static bool killedFromOutside(const WorkerProcess& w) {
    return WIFSIGNALED(w.status) && WTERMSIG(w.status) == SIGKILL && !w.sigkilled_by_us;
  }

  void stopOthers(int signal) {
    for (auto& w : workers_) {
      if (!w.running) continue;
      w.stopped_by_us = true;
      signalGroup(w, signal);
    }
    if (!stopping_) {
      stopping_ = true;
      kill_at_ = Clock::now() + std::chrono::milliseconds(static_cast<long long>(plan_.grace_period * 1000));
    }
  }

  void forward(int signal) {
    ++interrupts_;
    if (!interrupt_) interrupt_ = signal;
    if (signal == SIGINT && interrupts_ > 1) {
      say("second interrupt: killing all workers");
      return killSurvivors("still running at the second interrupt");
    }
    say(fmt::format("received SIG{}: forwarding it to every worker", ::sigabbrev_np(signal)));
    stopOthers(signal);
  }

  void killSurvivors(const std::string& why) {
    for (auto& w : workers_) {
      if (w.running) {
        say(fmt::format("{} (pid {}) {}: sending SIGKILL", who(*w.spec), w.pid, why));
        w.sigkilled_by_us = true;
        signalGroup(w, SIGKILL);
      }
    }
    kill_at_.reset();
  }

  std::vector<std::string> stoppedRanks() const {
    std::vector<std::string> ranks;
    for (const auto& w : workers_) {
      if (w.stopped_by_us && &w != failed_) ranks.push_back(std::to_string(w.spec->rank));
    }
    return ranks;
  }

  void summarise() const {
    const WorkerProcess& w = *failed_;
    say(fmt::format("error: {} (pid {}) {} after {:.2f} s; it failed first", who(*w.spec), w.pid,
                    w.describeExit(), w.exited_at));
    if (consequence_) {
      say(fmt::format("rank {} {} just before (a SIGKILLed worker's connections close before its exit is seen)",
                      consequence_->spec->rank, consequence_->describeExit()));
    }
    const auto& lines = w.err->lastLines();
    if (lines.empty()) {
      say(fmt::format("{} wrote nothing to stderr", who(*w.spec)));
    } else {
      say(fmt::format("last {} line(s) of {}'s stderr:", lines.size(), who(*w.spec)));
      for (const auto& line : lines) writeFully(2, "accel:   | " + line + "\n");
    }
    auto stopped = stoppedRanks();
    say(stopped.empty() ? "no other rank was running" : "stopped ranks " + join(stopped, ", "));
  }

  int failedExit() const {
    summarise();
    return failed_->exitCode();
  }

  int interrupted() const {
    auto stopped = stoppedRanks();
    say(fmt::format("interrupted by SIG{}; stopped ranks {}", ::sigabbrev_np(interrupt_),
                    stopped.empty() ? "none" : join(stopped, ", ")));
    return 128 + interrupt_;
  }
};

}  // namespace

int superviseWorkers(const LaunchPlan& plan) { return Supervisor(plan).run(); }

}  // namespace accel
