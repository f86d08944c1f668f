// SPDX-License-Identifier: Apache-2.0
// Machine 0's view of the other machines beside the job's decisions: their statuses for `accel
// top` (the last each sent), and their clocks and arrivals for the straggler watch.
// Machine 0's part in the straggler watch (flight/straggler_watch.h): each member's clock is
// probed once a second while the job runs (clock_offset.h), and its ranks' arrivals go to the
// supervisor with the member's offset; arrivals from a member whose clock is not known yet are
// dropped (the first echo comes within a round trip of its start), and so are a round's that
// come after it ended (a member reads its rings once more as its round ends).
#include <chrono>

#include "lib/common/flight_ring.h"
#include "lib/launch/job/job_hub.h"
#include "lib/launch/job/job_messages.h"

namespace accel::launch::job {

namespace {
constexpr auto kProbeEvery = std::chrono::seconds(1);
}  // namespace

void JobHub::probeClock(Member& m) {
  if (plan_.stragglers.window <= 0 || !started_ || finished_ || !m.started || !m.conn->open()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - m.probed < kProbeEvery) return;
  m.probed = now;
  m.clock.sent(++probes_, accel::flight::nowNs());
  m.conn->send(job::encode(job::ClockProbe{probes_}));
}

void JobHub::onArrivals(Member& m, const job::Message& message) {
  if (const auto* echo = std::get_if<job::ClockEcho>(&message)) {
    return m.clock.echoed(echo->id, echo->ns, accel::flight::nowNs());
  }
  const auto estimate = m.clock.estimate();
  const auto& arrivals = std::get<job::ArrivalsSent>(message).arrivals;
  if (!estimate || plan_.stragglers.window <= 0 || arrivals.round != round_) return;
  queued_.push_back(JobEvent::arrived(arrivals, estimate->offset_ns));
}

// What `accel top` sees of the other machines (job_link.h MachineReport).
std::vector<JobLink::MachineReport> JobHub::machineReports() const {
  const auto now = std::chrono::steady_clock::now();
  auto seconds = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(now - t).count();
  };
  std::vector<MachineReport> reports;
  for (const auto& [machine, m] : members_) {
    reports.push_back({machine, m.who.host, m.status, m.status.empty() ? -1 : seconds(m.status_at),
                       m.conn ? seconds(m.conn->lastHeard()) : -1, m.lost});
  }
  return reports;
}

void JobHub::tellStatus(int machine, long long id, const std::string& json) {
  const auto it = members_.find(machine);
  if (it != members_.end() && it->second.conn && it->second.conn->open()) {
    it->second.conn->send(job::encode(job::StatusAnswer{id, json}));
  }
}

}  // namespace accel::launch::job
