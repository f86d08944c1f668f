// SPDX-License-Identifier: Apache-2.0
// The handle of an asynchronous collective: wait for it, poll it, read its error.
// Thread-safe: any thread may wait; exactly one completes it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "lib/common/defaults.h"
#include "lib/common/error.h"

namespace accel {

// A collective failed (a peer died, a timeout, a backend error). The message names the operation,
// this rank and, where it can be known, the rank at fault.
class CommError : public Error {
 public:
  explicit CommError(const std::string& message, std::string hint = {}) : Error(message, std::move(hint)) {}
};

class Work {
 public:
  explicit Work(std::string description) : description_(std::move(description)) {}
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  bool isCompleted();
  // Blocks until done; throws the operation's error as a CommError. Throws CommError when
  // `timeout` passes first (the operation itself keeps its own timeout and will still end).
  void wait(std::chrono::milliseconds timeout = defaults::kWorkWaitTimeout);
  // The error (a CommError), or null. Made on the calling thread.
  std::exception_ptr exception();
  const std::string& description() const { return description_; }
  // When the operation was created, when it started running (the creation time unless the
  // backend knows better: NCCL measures the kernel on the GPU) and when it completed (profiling).
  std::chrono::steady_clock::time_point createdAt() const { return created_; }
  std::chrono::steady_clock::time_point startedAt();
  std::chrono::steady_clock::time_point completedAt();

  // Called once by the backend; a non-empty `error` marks failure. Only the message crosses
  // threads: every waiter throws its own exception object (no exception_ptr is shared).
  void complete(std::string error = {});
  // Called by the backend before complete(): the operation ran for `busy` up to now.
  void setRunTime(std::chrono::steady_clock::duration busy);

 private:
  std::string description_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::string error_;
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point completed_;
  std::chrono::steady_clock::time_point started_ = created_;
};

using WorkPtr = std::shared_ptr<Work>;

// A Work that is already finished (world size 1, zero elements).
WorkPtr completedWork(const std::string& description);

}  // namespace accel
