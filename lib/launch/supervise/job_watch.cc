// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/job_watch.h"

#include "lib/launch/watch/event.h"

namespace accel::launch::supervise {

JobWatch::JobWatch(const plan::LaunchPlan& plan, const std::vector<WorkerProcess>& workers, const FlightBoard& flights,
                   const LaunchReport& report)
    : plan_(plan),
      workers_(workers),
      flights_(flights),
      report_(report),
      story_(plan, [this](const std::string& line, bool ours) { ours ? say(line) : report_.plain(line); }),
      metrics_(plan, workers, flights),
      collector_([this](const std::string& line) { say(line); }),
      launched_(watch::wallClockNow()) {}

void JobWatch::open(const std::string& run_dir, job::JobLink& link, RankAnswers& answers) {
  link_ = &link;
  story_.open(run_dir, link);
  if (std::string line = metrics_.open(); !line.empty()) say(line);
  statuses_ = std::make_unique<StatusReports>(plan_, link, answers,
                                              [this] { return machineStatus(plan_, workers_, flights_, moment()); });
  collector_.open(run_dir);
}

void JobWatch::roundStarts(int round, int restarts) {
  round_ = round;
  restarts_ = restarts;
  round_start_ = std::chrono::steady_clock::now();
  story_.roundStarts(round, restarts);
}

LogForward JobWatch::forward() {
  if (plan_.log_dir.empty() || plan_.num_machines < 2 || plan_.machine_rank == 0) return {};
  return [this](int local, int stream, std::string_view bytes) { forwarder_.push(round_, local, stream, bytes); };
}

void JobWatch::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  metrics_.addPollFds(fds, timeout_ms);
  statuses_->addTimeout(timeout_ms);
  if (forwarder_.held() > 0) timeout_ms = timeout_ms < 0 ? 50 : std::min(timeout_ms, 50);  // as the channel drains
}

void JobWatch::service(const std::vector<pollfd>& fds) {
  if (metrics_.listening()) metrics_.service(fds, moment());  // a moment costs a look at the event log
  statuses_->service();
  if (forwarder_.held() > 0) {
    for (const auto& line : forwarder_.service(*link_)) say(line);
  }
}

bool JobWatch::follow(const job::JobEvent& event) {
  using Kind = job::JobEvent::Kind;
  if (event.kind == Kind::Event) {
    story_.follow(event);
    return true;
  }
  if (event.kind == Kind::Logs) {
    collector_.write(event.rank, event.message, *event.logs);
    return true;
  }
  if (event.kind == Kind::Stacks && event.id == 0 && event.stacks) {
    story_.stacksGathered(event.stacks->why, event.stacks->ranks.size(), event.stacks->notes.size());
  }
  return statuses_->follow(event);
}

void JobWatch::roundEnds() {
  for (const auto& line : forwarder_.service(*link_, true)) say(line);
}

void JobWatch::ended(const job::JobEvent& end, int code, int signal_fd) {
  story_.ended(end, code);
  metrics_.linger(signal_fd, moment(&end, code), *link_);
}

JobMoment JobWatch::moment(const job::JobEvent* end, int code) const {
  JobMoment m{round_, restarts_, launched_, round_start_};
  m.events = story_.eventsFile();
  if (end) {
    m.ended = true;
    m.exit_code = code;
    m.verdict = JobStory::verdictOf(*end, code);
  }
  return m;
}

}  // namespace accel::launch::supervise
