// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/rank_arrivals.h"

#include <algorithm>

namespace accel::launch::supervise {

namespace {
constexpr auto kLookEvery = std::chrono::seconds(1);
}  // namespace

RankArrivals::RankArrivals(const plan::LaunchPlan& plan, const FlightBoard& flights,
                           const std::vector<WorkerProcess>& workers)
    : plan_(plan), flights_(flights), workers_(workers), watch_(plan.stragglers, plan.world_size) {}

void RankArrivals::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  if (!on()) return;
  torch_.addPollFds(fds, timeout_ms);
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_ - Clock::now()).count();
  const int due = static_cast<int>(std::clamp<long long>(left, 0, 1000));
  if (timeout_ms < 0 || due < timeout_ms) timeout_ms = due;
}

void RankArrivals::newRound(int round) {
  round_ = round;
  torch_.stop();
  cursor_.clear();
  watch_.newRound(plan_.world_size);
  next_ = Clock::now() + kLookEvery;
}

std::vector<std::string> RankArrivals::service(const std::vector<pollfd>& fds, job::JobLink& link) {
  if (!on()) return {};
  std::vector<std::string> lines;
  if (auto answers = torch_.service(fds)) {
    flight::Arrivals batch;
    for (const auto& r : *answers) {
      batch.ranks.push_back({r.rank, r.pid});
      cursor_.take(r.rank, r.pid, r.calls, batch.calls);
    }
    lines = judge(std::move(batch), link);
  }
  if (Clock::now() < next_) return lines;
  next_ = Clock::now() + kLookEvery;
  flight::Arrivals batch;
  for (const auto& w : workers_) {
    if (auto dump = flights_.read(w)) {
      batch.ranks.push_back({w.spec->rank, w.pid});
      cursor_.take(*dump, batch.calls);
    }
  }
  if (!torch_.running()) {  // one look at a time
    if (const std::string why = torch_.start(flights_.torchRanks(workers_, plan_)); !why.empty() && !said_) {
      said_ = true;
      lines.push_back("warning: the straggler watch cannot read the Python ranks' records: " + why);
    }
  }
  for (auto& line : judge(std::move(batch), link)) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> RankArrivals::judge(flight::Arrivals batch, job::JobLink& link) {
  if (batch.calls.empty()) return {};
  batch.host = plan_.host;
  batch.round = round_;
  if (link.sendArrivals(batch)) return {};
  return watch_.add(batch, 0, accel::flight::nowNs());
}

std::vector<std::string> RankArrivals::follow(const job::JobEvent& event) {
  if (!on() || !event.arrivals) return {};
  return watch_.add(*event.arrivals, event.offset_ns, accel::flight::nowNs());
}

}  // namespace accel::launch::supervise
