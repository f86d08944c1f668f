// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/status_reports.h"

#include <algorithm>

#include <fmt/format.h>

#include "lib/launch/job/job_messages.h"
#include "lib/launch/watch/status_json.h"

namespace accel::launch::supervise {

StatusReports::StatusReports(const plan::LaunchPlan& plan, job::JobLink& link, RankAnswers& answers, Own own)
    : plan_(plan), link_(link), answers_(answers), own_(std::move(own)) {
  answers_.onStatusQuestion([this](long long id) { asked(id); });
}

void StatusReports::addTimeout(int& timeout_ms) const {
  if (!member() || plan_.num_machines < 2) return;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_ - Clock::now()).count();
  const int ms = static_cast<int>(std::clamp<long long>(left, 0, 1000));
  timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
}

void StatusReports::service() {
  if (!member() || plan_.num_machines < 2 || Clock::now() < next_) return;
  next_ = Clock::now() + kEvery;
  link_.sendStatus(watch::fittedStatusJson(own_(), job::kMaxStatusText));
}

void StatusReports::asked(long long id) {
  if (member()) return link_.askStatus(id);  // a StatusAnswer event brings machine 0's view
  answers_.answer(id, view());
}

bool StatusReports::follow(const job::JobEvent& event) {
  if (event.kind == job::JobEvent::Kind::StatusAsked) {
    link_.tellStatus(event.rank, event.id, view("", job::kMaxStatusText));
    return true;
  }
  if (event.kind != job::JobEvent::Kind::StatusAnswer) return false;
  answers_.answer(event.id, event.message.empty()
                                ? view(fmt::format("machine 0 ({}) cannot be asked now: this machine's ranks only",
                                                   plan_.master_addr))
                                : event.message);
  return true;
}

std::string StatusReports::view(const std::string& note, size_t max) const {
  watch::JobView v;
  v.note = note;
  v.machines.push_back({own_(), -1});
  std::vector<std::string> missing;
  for (const auto& report : link_.machineReports()) {
    if (report.lost) {
      missing.push_back(fmt::format("machine {} ({}) was lost", report.machine, report.host));
      continue;
    }
    if (report.status.empty()) {
      missing.push_back(fmt::format("machine {} ({}) has sent no status yet", report.machine, report.host));
      continue;
    }
    try {
      v.machines.push_back(
          {watch::statusFromJson(nlohmann::json::parse(report.status, nullptr, false)), report.status_age});
    } catch (const watch::StatusError& e) {
      missing.push_back(
          fmt::format("machine {} ({}) sent a status that is unreadable: {}", report.machine, report.host, e.what()));
    }
  }
  for (const auto& m : missing) v.note += (v.note.empty() ? "" : "; ") + m;
  std::sort(v.machines.begin(), v.machines.end(), [](const watch::MachineView& a, const watch::MachineView& b) {
    return a.status.machine < b.status.machine;
  });
  return watch::fittedJobViewJson(std::move(v), max);
}

}  // namespace accel::launch::supervise
