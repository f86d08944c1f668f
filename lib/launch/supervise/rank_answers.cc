// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/rank_answers.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/stacks/stack_collector.h"

namespace accel::launch::supervise {

std::string RankAnswers::listen() {
  try {
    questions_ = std::make_unique<RankQuestions>(fmt::format("m{}", plan_.machine_rank));
  } catch (const Error& e) {
    return fmt::format("warning: {}; a worker whose collective fails cannot ask about its peers", e.what());
  }
  return "";
}

void RankAnswers::answer(long long id, const std::string& text) {
  if (questions_) questions_->answer(id, text);
}

std::string RankAnswers::socketName() const { return questions_ ? questions_->name() : ""; }

void RankAnswers::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  if (!questions_) return;
  questions_->addPollFds(fds);
  const int due = questions_->timeoutMs();
  if (due >= 0 && (timeout_ms < 0 || due < timeout_ms)) timeout_ms = due;
}

void RankAnswers::service(const std::vector<pollfd>& fds) {
  if (!questions_) return;
  for (const auto& q : questions_->service(fds)) {
    if (q.rank == RankQuestions::kStatus) {
      if (on_status_) on_status_(q.id);
    } else if (q.rank < 0) {
      link_.wantStacks(q.id, q.seconds);  // "stacks": a Stacks event answers
    } else if (worker(q.rank)) {
      questions_->answer(q.id, describe(q.rank));
    } else {
      link_.ask(q.id, q.rank);
    }
  }
}

bool RankAnswers::follow(const job::JobEvent& event) {
  if (event.kind == job::JobEvent::Kind::Ask) {
    link_.tell(event.id, describe(event.rank));
    return true;
  }
  if (event.kind == job::JobEvent::Kind::Answer) {
    if (questions_) questions_->answer(event.id, event.message);
    return true;
  }
  if (event.kind == job::JobEvent::Kind::Stacks && event.id != 0) {
    if (questions_) questions_->answer(event.id, stacks::encodeStacks(*event.stacks));
    return true;
  }
  return false;
}

const WorkerProcess* RankAnswers::worker(int rank) const {
  for (const auto& w : workers_) {
    if (w.spec && w.spec->label.empty() && w.spec->rank == rank) return &w;
  }
  return nullptr;
}

std::string RankAnswers::describe(int rank) const {
  const WorkerProcess* w = worker(rank);
  if (!w)
    return fmt::format("rank {} is not a worker of machine {}'s launcher ({})", rank, plan_.machine_rank, plan_.host);
  return fmt::format("rank {} (pid {}) on machine {} ({}): {}", rank, w->pid, plan_.machine_rank, plan_.host,
                     w->describeNow());
}

}  // namespace accel::launch::supervise
