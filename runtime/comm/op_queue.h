// SPDX-License-Identifier: Apache-2.0
// Runs a group's operations one at a time, in submission order, so every rank issues them to
// its peers in the same order. They run on a worker thread, so the caller does not block until
// it waits; an operation submitted as `small` runs on the caller's own thread instead when
// nothing is queued or running, because handing it to another thread and back costs more than
// the operation itself (two wake-ups, tens of microseconds, against about a microsecond for a
// 4 KiB all_reduce over shared memory). After a failure the queue is broken: later operations
// fail at once with the first error. Thread-safe; the destructor finishes what was queued.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/comm/work.h"

namespace accel {

class OpQueue {
 public:
  // Makes the message of a failed operation from its description and the exception's text.
  using FailureText = std::function<std::string(const std::string& description, const std::string& what)>;

  explicit OpQueue(FailureText failure_text);
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  WorkPtr submit(std::string description, std::function<void()> run, bool small = false);

 private:
  struct Task {
    WorkPtr work;
    std::function<void()> run;
  };
  void loop();
  void execute(Task& task);  // one at a time: `running_` is held around it

  FailureText failure_text_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  bool running_ = false;  // an operation is executing (on the worker or a caller's thread)
  bool stopping_ = false;
  std::string broken_;  // the first failure; read and written only inside execute()
  std::thread thread_;
};

// The failure text of every CPU backend: "<operation> failed on rank R of N: <what>; <cause>",
// the cause from `diagnose` (e.g. which ranks have left the job), when it knows one.
OpQueue::FailureText groupFailureText(int rank, int size, std::function<std::string()> diagnose);

}  // namespace accel
