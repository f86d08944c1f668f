// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/op_queue.h"

#include <fmt/format.h>

#include "lib/common/flight_ring.h"
#include "runtime/comm/collective_now.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWatchTick = std::chrono::milliseconds(500);
constexpr auto kProbeAfter = std::chrono::seconds(1);  // far above any healthy small operation

}  // namespace

OpQueue::OpQueue(FailureText failure_text, Stalled stalled, TimedOut timed_out, std::chrono::milliseconds timeout)
    : failure_text_(std::move(failure_text)),
      stalled_(std::move(stalled)),
      timed_out_(std::move(timed_out)),
      timeout_(timeout) {
  thread_ = std::thread([this] { loop(); });
  if (stalled_) watch_thread_ = std::thread([this] { watchLoop(); });
  if (timed_out_) timer_thread_ = std::thread([this] { timerLoop(); });
}

OpQueue::~OpQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  watch_wake_.notify_all();
  timer_wake_.notify_all();
  if (watch_thread_.joinable()) watch_thread_.join();
  if (timer_thread_.joinable()) timer_thread_.join();
}

WorkPtr OpQueue::submit(CollectiveCall call, Run run, bool small) {
  Task task{std::make_shared<Work>(call.describe()), call, std::move(run)};
  WorkPtr work = task.work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task.call.seq = ++submitted_;
    task.call.shown = StepsOf::current();
    task.queued = !small || running_ || !queue_.empty();
    if (task.queued && flight_group_ != kNoFlightGroup) {
      task.flight = flightBegin(flight_group_, task.call, false, flight::ticks());
    }
    if (task.queued) {
      queue_.push_back(std::move(task));
      wake_.notify_one();
      return work;
    }
    begin(task);  // nothing ahead of it: run it here, in order
  }
  execute(task);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }
  wake_.notify_one();  // another thread may have queued something meanwhile
  return work;
}

void OpQueue::begin(const Task& task) {
  running_ = true;
  if (stalled_ || timed_out_) {  // only the watch and the timer read these
    current_ = task.call;
    current_since_ = Clock::now();
    if (timed_out_) current_ran_ = RunningDeadline(timeout_, kWatchTick);
  }
  if (timed_out_) timer_wake_.notify_all();  // the timer counts from now
}

void OpQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return !running_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    begin(task);
    lock.unlock();
    execute(task);
    lock.lock();
    running_ = false;
  }
}

void OpQueue::recordFlights(int size, int rank) { flight_group_ = flightGroup(label_, size, rank); }

void OpQueue::execute(Task& task) {
  const bool recorded = flight_group_ != kNoFlightGroup;
  const auto start = Clock::now();
  if (recorded) {
    const int64_t now = flight::ticks();
    if (task.queued) flightStart(task.flight, now);
    if (!task.queued) task.flight = flightBegin(flight_group_, task.call, true, now);
  }
  if (!broken_.empty()) {
    if (recorded) flightEnd(task.flight, false, flight::ticks());
    task.work->complete(task.work->description() + " not run: the group failed earlier: " + broken_);
    return;
  }
  const std::string numbered = task.call.numbered();
  noteCollective(true, numbered, label_);
  bool ok = true;
  try {
    task.run(task.call);
    task.work->complete();
  } catch (const std::exception& e) {
    ok = false;
    broken_ = failure_text_(task.work->description(), task.call, e, Clock::now() - start);
    task.work->complete(broken_);
  }
  if (recorded) flightEnd(task.flight, ok, flight::ticks());
  noteCollective(false, numbered, label_);
}

void OpQueue::watchLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t aborted = 0;
  while (!stopping_) {
    watch_wake_.wait_for(lock, kWatchTick);
    if (stopping_ || !running_ || current_.seq == aborted || Clock::now() - current_since_ < kProbeAfter) continue;
    const CollectiveCall call = current_;
    lock.unlock();
    const bool ended = stalled_(call);
    lock.lock();
    if (ended) aborted = call.seq;
  }
}

void OpQueue::timerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t fired = 0;
  while (!stopping_) {
    if (!running_ || current_.seq == fired) {
      timer_wake_.wait(lock);
      continue;
    }
    if (!current_ran_.passed()) {
      timer_wake_.wait_for(lock, current_ran_.sleep());
      continue;
    }
    const CollectiveCall call = current_;
    fired = call.seq;
    lock.unlock();
    timed_out_(call);
    lock.lock();
  }
}

OpQueue::FailureText groupFailureText(int rank, int size, Diagnose diagnose, Investigate investigate,
                                      std::string part) {
  return [rank, size, diagnose = std::move(diagnose), investigate = std::move(investigate), part = std::move(part)](
             const std::string& description, const CollectiveCall& call, const std::exception& error,
             std::chrono::steady_clock::duration waited) {
    const Findings found = investigate ? investigate(call, error, waited) : Findings{};
    const std::string head = part.empty() ? fmt::format("{} failed on rank {} of {}", description, rank, size) : part;
    if (!found.verdict.empty()) return fmt::format("{}: {}", head, found.verdict);
    const std::string cause = diagnose ? diagnose(found.clues) : "";
    return fmt::format("{}: {}{}", head, error.what(), cause.empty() ? "" : "; " + cause);
  };
}

}  // namespace accel
