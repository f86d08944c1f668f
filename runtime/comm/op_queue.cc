// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/op_queue.h"

#include <fmt/format.h>

namespace accel {

OpQueue::OpQueue(FailureText failure_text) : failure_text_(std::move(failure_text)) {
  thread_ = std::thread([this] { loop(); });
}

OpQueue::~OpQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

WorkPtr OpQueue::submit(std::string description, std::function<void()> run, bool small) {
  Task task{std::make_shared<Work>(std::move(description)), std::move(run)};
  WorkPtr work = task.work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!small || running_ || !queue_.empty()) {
      queue_.push_back(std::move(task));
      wake_.notify_one();
      return work;
    }
    running_ = true;  // nothing ahead of it: run it here, in order
  }
  execute(task);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }
  wake_.notify_one();  // another thread may have queued something meanwhile
  return work;
}

void OpQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return !running_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    execute(task);
    lock.lock();
    running_ = false;
  }
}

void OpQueue::execute(Task& task) {
  if (!broken_.empty()) {
    task.work->complete(task.work->description() + " not run: the group failed earlier: " + broken_);
    return;
  }
  try {
    task.run();
    task.work->complete();
  } catch (const std::exception& e) {
    broken_ = failure_text_(task.work->description(), e.what());
    task.work->complete(broken_);
  }
}

OpQueue::FailureText groupFailureText(int rank, int size, std::function<std::string()> diagnose) {
  return [rank, size, diagnose = std::move(diagnose)](const std::string& description, const std::string& what) {
    std::string cause = diagnose ? diagnose() : "";
    return fmt::format("{} failed on rank {} of {}: {}{}", description, rank, size, what, cause.empty() ? "" : "; " + cause);
  };
}

}  // namespace accel
