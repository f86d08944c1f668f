// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/work.h"

#include <algorithm>

#include <fmt/format.h>

namespace accel {

bool Work::isCompleted() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_cv_.wait_for(lock, timeout, [this] { return done_; })) {
    throw CommError(fmt::format("{} did not finish within {} ms", description_, timeout.count()));
  }
  if (!error_.empty()) throw CommError(error_);
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_.empty() ? nullptr : std::make_exception_ptr(CommError(error_));
}

std::chrono::steady_clock::time_point Work::completedAt() {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

std::chrono::steady_clock::time_point Work::startedAt() {
  std::lock_guard<std::mutex> lock(mutex_);
  return started_;
}

void Work::setRunTime(std::chrono::steady_clock::duration busy) {
  std::lock_guard<std::mutex> lock(mutex_);
  started_ = std::max(created_, std::chrono::steady_clock::now() - busy);
}

void Work::complete(std::string error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    completed_ = std::chrono::steady_clock::now();
    error_ = std::move(error);
  }
  done_cv_.notify_all();
}

WorkPtr completedWork(const std::string& description) {
  auto w = std::make_shared<Work>(description);
  w->complete();
  return w;
}

}  // namespace accel
