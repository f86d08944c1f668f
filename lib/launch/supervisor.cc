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
#include "lib/launch/worker_process.h"

namespace accel {

namespace {

constexpr size_t kSummaryLines = 20;
using Clock = std::chrono::steady_clock;

void say(const std::string& line) { writeFully(2, "accel: " + line + "\n"); }

// Blocks the signals the loop reads from a signalfd; restores the old mask on destruction.
class SignalChannel {
 public:
  SignalChannel() {
    sigemptyset(&set_);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    ::sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = ::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0) throw Error(fmt::format("signalfd failed: {}", ::strerror(errno)));
    old_pipe_ = ::signal(SIGPIPE, SIG_IGN);  // a closed console must not kill the launcher
  }
  ~SignalChannel() {
    ::close(fd_);
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
    ::signal(SIGPIPE, old_pipe_);
  }
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;
  int fd() const { return fd_; }

 private:
  sigset_t set_, old_;
  int fd_ = -1;
  sighandler_t old_pipe_ = SIG_DFL;
};

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
    for (int attempt = 0;; ++attempt) {
      startAll(attempt);
      loop(signals.fd());
      if (interrupt_) return interrupted();
      if (!failed_) return 0;
      if (attempt >= plan_.max_restarts) return failedExit();
      summarise();
      say(fmt::format("restarting all workers (restart {} of {})", attempt + 1, plan_.max_restarts));
      failed_ = nullptr;
    }
  }

 private:
  const LaunchPlan& plan_;
  std::vector<WorkerProcess> workers_;
  const WorkerProcess* failed_ = nullptr;  // first failure of this attempt
  int interrupt_ = 0;                      // first forwarded signal
  int interrupts_ = 0;
  bool stopping_ = false;
  std::optional<Clock::time_point> kill_at_;  // when survivors get SIGKILL; none once it was sent
  Clock::time_point started_ = Clock::now();

  double now() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

  std::string prefix(const WorkerSpec& spec) const {
    return plan_.label_host.empty() ? fmt::format("[rank {}] ", spec.rank)
                                    : fmt::format("[{}:rank {}] ", plan_.label_host, spec.rank);
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
    bool cleaned = false;
    while (anyRunning() || anyPipeOpen()) {
      if (!anyRunning() && !cleaned) {
        // Everyone exited; whatever they left in their groups holds our pipes: end it.
        for (const auto& w : workers_) signalGroup(w, SIGKILL);
        cleaned = true;
      }
      std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
      for (const auto& w : workers_) {
        if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0});
        if (w.err_fd >= 0) fds.push_back({w.err_fd, POLLIN, 0});
      }
      int timeout = -1;
      if (kill_at_ && anyRunning()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at_ - Clock::now()).count();
        timeout = static_cast<int>(std::max<long long>(0, left));
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
        bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (failed && !failed_ && !interrupt_ && !w.stopped_by_us) {
          failed_ = &w;
          stopOthers(SIGTERM);
        }
      }
    }
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
        say(fmt::format("rank {} (pid {}) {}: sending SIGKILL", w.spec->rank, w.pid, why));
        signalGroup(w, SIGKILL);
      }
    }
    kill_at_.reset();
  }

  std::vector<std::string> stoppedRanks() const {
    std::vector<std::string> ranks;
    for (const auto& w : workers_) {
      if (w.stopped_by_us) ranks.push_back(std::to_string(w.spec->rank));
    }
    return ranks;
  }

  void summarise() const {
    const WorkerProcess& w = *failed_;
    say(fmt::format("error: rank {} (pid {}) {} after {:.2f} s; it failed first", w.spec->rank, w.pid,
                    w.describeExit(), w.exited_at));
    const auto& lines = w.err->lastLines();
    if (lines.empty()) {
      say(fmt::format("rank {} wrote nothing to stderr", w.spec->rank));
    } else {
      say(fmt::format("last {} line(s) of rank {}'s stderr:", lines.size(), w.spec->rank));
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
