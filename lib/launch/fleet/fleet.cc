// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/fleet.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <iostream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/process/signal_channel.h"
#include "lib/common/write_fully.h"
#include "lib/launch/fleet/member_process.h"

namespace accel::launch::fleet {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kOutputAfterExit = 2;  // seconds a launcher's pipes may stay open after its exit
constexpr size_t kHeldLines = 20;       // of what ssh says before a launcher is ready

class Fleet {
 public:
  Fleet(const std::vector<FleetMember>& members, const FleetTimes& times) : times_(times) {
    for (const auto& m : members) {
      Child c;
      c.m = &m;
      children_.push_back(std::move(c));
    }
  }

  int run() {
    process::SignalChannel signals;
    for (auto& c : children_) spawn(c);
    while (busy()) {
      pump(signals);
      reap();
      enforceDeadlines();
    }
    return exitCode();
  }

 private:
  double now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  bool busy() const {
    for (const auto& c : children_) {
      if (c.running || c.out.fd >= 0 || c.err.fd >= 0) return true;
    }
    return false;
  }

  void relay(Child& c, Stream& s, const std::string& line) {
    if (&s == &c.out && !c.ready && line == kLauncherReady) {
      c.ready = true;
      return showHeld(c);
    }
    if (&s == &c.err && holdsStderr(c)) {
      c.held.push_back(line);
      if (c.held.size() > kHeldLines) {
        c.held.pop_front();
        ++c.held_dropped;
      }
      return;
    }
    show(s.to, c, line);
  }

  static void show(int to, const Child& c, const std::string& line) {
    const std::string prefix = "accel: ";
    writeFully(to, line.compare(0, prefix.size(), prefix) == 0
                       ? prefix + "[" + c.m->host + "] " + line.substr(prefix.size()) + "\n"
                       : line + "\n");
  }

  void showHeld(Child& c) {
    if (c.held_dropped > 0) show(c.err.to, c, droppedNote(c));
    for (const auto& line : c.held) show(c.err.to, c, line);
    c.held.clear();
    c.held_dropped = 0;
  }

  // A remote launcher's stderr waits until it is ready (or has failed other than by ssh), so
  // that ssh's own complaint is said once, inside accel's error.
  static bool holdsStderr(const Child& c) { return !c.ready && !c.m->local && (c.running || c.code == 255); }

  static std::string droppedNote(const Child& c) {
    return fmt::format("accel: ({} earlier line(s) of {}'s output before it was ready not kept)", c.held_dropped,
                       c.m->host);
  }

  // The stream's end: its unfinished line, then its pipe closed.
  void finish(Child& c, Stream& s) {
    if (!s.partial.empty()) relay(c, s, s.partial);
    s.partial.clear();
    ::close(s.fd);
    s.fd = -1;
  }

  void drain(Child& c, Stream& s) {
    char buffer[65536];
    const ssize_t n = ::read(s.fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) return finish(c, s);
    s.partial.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      relay(c, s, s.partial.substr(start, nl - start));
    }
    s.partial.erase(0, start);
  }

  void flushOrders(Child& c) {
    const ssize_t n = ::write(c.in, c.pending.data(), c.pending.size());
    if (n > 0) c.pending.erase(0, static_cast<size_t>(n));
    if (n < 0 && errno != EAGAIN && errno != EINTR) closeLink(c);  // it is gone; reap() says how
  }

  void closeLink(Child& c) {
    if (c.in >= 0) ::close(c.in);
    c.in = -1;
    c.pending.clear();
  }

  void pump(process::SignalChannel& signals) {
    std::vector<pollfd> fds = {{signals.fd(), POLLIN, 0}};
    std::vector<std::pair<Child*, Stream*>> readers;
    std::vector<Child*> writers;
    for (auto& c : children_) {
      for (Stream* s : {&c.out, &c.err}) {
        if (s->fd < 0) continue;
        fds.push_back({s->fd, POLLIN, 0});
        readers.emplace_back(&c, s);
      }
    }
    for (auto& c : children_) {
      if (c.in < 0 || c.pending.empty()) continue;
      fds.push_back({c.in, POLLOUT, 0});
      writers.push_back(&c);
    }
    if (::poll(fds.data(), fds.size(), 100) <= 0) return;
    if (fds[0].revents & POLLIN) readSignals(fds[0].fd);
    for (size_t i = 0; i < readers.size(); ++i) {
      if (fds[1 + i].revents) drain(*readers[i].first, *readers[i].second);
    }
    for (size_t i = 0; i < writers.size(); ++i) {
      if (fds[1 + readers.size() + i].revents) flushOrders(*writers[i]);
    }
  }

  // SIGINT, SIGTERM, SIGHUP, SIGQUIT stop the job; SIGUSR1 and SIGUSR2 go to every launcher over
  // its link, which passes them on to its workers (SLURM's warning before a time limit); Ctrl-Z
  // cannot stop the other machines' workers, so the job goes on and says so.
  void readSignals(int fd) {
    signalfd_siginfo info;
    while (::read(fd, &info, sizeof info) == sizeof info) {
      const int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGUSR1 || sig == SIGUSR2) {
        for (auto& c : children_) {
          if (c.in >= 0) c.pending += sig == SIGUSR1 ? kForwardUsr1 : kForwardUsr2;
        }
      } else if (sig == SIGTSTP) {
        writeFully(2, "accel: Ctrl-Z cannot stop the other machines' workers: the job goes on (Ctrl-C stops it)\n");
      } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
        if (!signal_) signal_ = sig;
        beginStop();
      }
    }
  }

  void reap() {
    for (auto& c : children_) {
      int status = 0;
      if (!c.running || ::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.running = false;
      c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      c.exited_at = now();
      closeLink(c);
      for (int i = 0; i < 64 && c.out.fd >= 0 && !c.ready; ++i) drain(c, c.out);  // its ready line, if any
      if (c.code != 0 && !first_failed_ && stop_at_ < 0) first_failed_ = &c;      // not one our stop caused
      if (!sshFailed(c)) showHeld(c);
      if (c.code != 0 && !c.ready) beginStop();  // it could not start: ssh, no accel, a usage error there
      if ((c.code != 0 || c.m->machine_rank == 0) && settle_from_ < 0) settle_from_ = now();
    }
  }

  void beginStop() {
    if (stop_at_ < 0) stop_at_ = now();
    for (auto& c : children_) closeLink(c);
  }

  void signalAll(int sig) {
    for (auto& c : children_) {
      if (c.running) ::kill(-c.pid, sig);
    }
  }

  // A launcher's output ends with it, unless something it left holds its pipes (an ssh control
  // master): then what came stays, the rest is not waited for.
  void closeAbandoned() {
    for (auto& c : children_) {
      if (c.running || now() < c.exited_at + kOutputAfterExit) continue;
      for (Stream* s : {&c.out, &c.err}) {
        if (s->fd >= 0) finish(c, *s);
      }
    }
  }

  void enforceDeadlines() {
    closeAbandoned();
    if (stop_at_ < 0 && settle_from_ >= 0 &&
        now() > settle_from_ + times_.heartbeat_timeout + times_.grace_period + 5) {
      beginStop();
    }
    if (stop_at_ < 0) return;
    const double since = now() - stop_at_;
    if (since > times_.grace_period + 10 && !killed_) {
      signalAll(SIGKILL);
      killed_ = true;
    } else if (since > times_.grace_period + 5 && !terminated_) {
      signalAll(SIGTERM);
      terminated_ = true;
    }
  }

  // A launcher that failed before it was ready could not start (ssh, no accel, a usage error
  // there): its own outcome. Once all had started, the job's verdict is machine 0's launcher's,
  // which the job channel gave it (a worker's own code; 1 for a machine lost), whichever
  // launcher's end the head saw first; a remote link that dropped (ssh's 255) is such a loss.
  int exitCode() const {
    if (signal_) return 128 + signal_;
    if (!first_failed_) return 0;
    if (!first_failed_->ready) return startFailure(*first_failed_);
    const Child& main =
        *std::find_if(children_.begin(), children_.end(), [](const Child& c) { return c.m->machine_rank == 0; });
    const Child& judged = main.code != 0 ? main : *first_failed_;
    return judged.code == 255 && !judged.m->local ? 1 : judged.code;
  }

  static bool sshFailed(const Child& c) { return !c.running && !c.ready && c.code == 255 && !c.m->local; }

  int startFailure(const Child& c) const {
    if (sshFailed(c)) {
      std::cerr << fmt::format("accel: error: ssh to {} (machine {}) failed{}\n", c.m->host, c.m->machine_rank,
                               c.held.empty() ? " with exit code 255" : ":");
      if (c.held_dropped > 0) std::cerr << droppedNote(c) << "\n";
      for (const auto& line : c.held) std::cerr << "accel:   | " << line << "\n";
      std::cerr << fmt::format(
          "accel: hint: check that `{} {} true` works from this machine (its keys, known_hosts and port); the "
          "other hosts were stopped\n",
          fmt::join(c.m->argv.begin(), c.m->argv.end() - 2, " "), c.m->host);
      return 1;
    }
    if (c.code == 127 || c.code == 126) return 2;
    return c.code;
  }

  FleetTimes times_;
  std::vector<Child> children_;
  Clock::time_point start_ = Clock::now();
  int signal_ = 0;
  const Child* first_failed_ = nullptr;
  double settle_from_ = -1, stop_at_ = -1;
  bool terminated_ = false, killed_ = false;
};

}  // namespace

int runFleet(const std::vector<FleetMember>& members, const FleetTimes& times, bool quiet) {
  if (!quiet) {
    std::vector<std::string> each;
    for (const auto& m : members) {
      each.push_back(fmt::format("{} ({} process{}{})", m.host, m.orders.place.procs,
                                 m.orders.place.procs == 1 ? "" : "es", m.local ? ", here" : ""));
    }
    std::cerr << fmt::format("accel: starting {} machine(s): {}\n", members.size(), fmt::join(each, ", "));
  }
  Fleet fleet(members, times);
  return fleet.run();
}

int runHead(const plan::LaunchPlan& plan, const settings::LaunchSettings& s, const facts::Facts& f) {
  return runFleet(fleetMembers(plan, s, f), {plan.grace_period, plan.heartbeat_timeout}, s.quiet);
}

}  // namespace accel::launch::fleet
