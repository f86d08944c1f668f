// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/metrics_door.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include <fmt/format.h>

#include "lib/common/defaults.h"
#include "lib/common/socket.h"
#include "lib/launch/watch/metrics_text.h"

namespace accel::launch::supervise {

std::string MetricsDoor::open() {
  const auto& w = plan_.watching;
  if (!w.metrics_port) return "";
  if (std::string warning = server_.open(w.metrics_addr, w.metrics_port); !warning.empty()) return warning;
  const bool v6 = w.metrics_addr.find(':') != std::string::npos;
  return fmt::format("Prometheus metrics: http://{}{}{}:{}/metrics", v6 ? "[" : "", w.metrics_addr, v6 ? "]" : "",
                     server_.port());
}

void MetricsDoor::service(const std::vector<pollfd>& fds, const JobMoment& moment) {
  server_.service(fds, [&] {
    const auto now = std::chrono::steady_clock::now();
    if (rendered_.empty() || now - rendered_at_ >= kFresh || rendered_ended_ != moment.ended) {
      rendered_ = watch::renderMetrics(machineStatus(plan_, workers_, flights_, moment));
      rendered_at_ = now;
      rendered_ended_ = moment.ended;
    }
    return rendered_;
  });
}

void MetricsDoor::linger(int signal_fd, const JobMoment& moment, job::JobLink& link) {
  if (!server_.listening() || plan_.watching.metrics_linger <= 0) return;
  const auto until = std::chrono::steady_clock::now() + defaults::fromSeconds(plan_.watching.metrics_linger);
  for (;;) {
    int timeout = net::remainingMs(until);
    if (timeout == 0) return;
    std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}};
    addPollFds(fds, timeout);
    link.addPollFds(fds);  // the job's verdict still reaches the other machines, whatever is left of it
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      bool ends = false;
      while (::read(signal_fd, &info, sizeof info) == sizeof info) {
        const auto signal = static_cast<int>(info.ssi_signo);
        ends = ends || signal == SIGINT || signal == SIGTERM || signal == SIGHUP || signal == SIGQUIT;
      }
      if (ends) return;
    }
    service(fds, moment);
    (void)link.service(fds);  // the job has ended: what the channel brings now changes nothing
  }
}

}  // namespace accel::launch::supervise
