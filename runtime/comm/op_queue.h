// SPDX-License-Identifier: Apache-2.0
// Runs a group's operations one at a time, in submission order, so every rank issues them to
// its peers in the same order, and numbers them (CollectiveCall::seq: 1, 2, …) in that order,
// which is how ranks tell that they are at the same place. They run on a worker thread, so the
// caller does not block until it waits; an operation submitted as `small` runs on the caller's
// own thread instead when nothing is queued or running, because handing it to another thread
// and back (two wake-ups) costs more than a small operation over shared memory itself. After a
// failure the queue is broken: later operations fail at once with the first error.
//
// With a `stalled` hook, a watch thread looks every half second at the operation running: once
// it has run for a second, it calls the hook with the operation's call, and again each half
// second while it runs, until the hook returns true (it has ended the operation: the transport
// found, e.g. through its CallWatch, that the ranks' calls differ, and closed its connections).
// Nothing of this touches an operation that ends within a second.
//
// With a `timed_out` hook and a `timeout`, a timer thread calls the hook (once) when the running
// operation has run for `timeout`, counting only the time this process ran
// (running_deadline.h): a job stopped with Ctrl-Z and continued is not late, however long it was
// stopped, while a peer that never comes is named at the timeout. The hook ends the operation
// (the transport closes its connections). The timer is apart from the watch, whose hook may wait
// on a silent store. Thread-safe; the destructor finishes what was queued.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "lib/common/running_deadline.h"
#include "runtime/comm/collective_call.h"
#include "runtime/comm/failure_clues.h"
#include "runtime/comm/flight_recorder.h"
#include "runtime/comm/work.h"

namespace accel {

class OpQueue {
 public:
  // Makes the message of a failed operation from its description, its call and its exception.
  // `waited`: how long it ran before it failed.
  using FailureText =
      std::function<std::string(const std::string& description, const CollectiveCall& call, const std::exception& error,
                                std::chrono::steady_clock::duration waited)>;
  using Run = std::function<void(const CollectiveCall& call)>;  // `call` numbered

  // On the watch thread: `call` has run a second or more. True: the hook ended it.
  using Stalled = std::function<bool(const CollectiveCall& call)>;

  // On the timer thread: `call` has run for the timeout.
  using TimedOut = std::function<void(const CollectiveCall& call)>;

  // No `stalled` hook: no watch thread; no `timed_out` hook: no timer thread.
  explicit OpQueue(FailureText failure_text, Stalled stalled = {}, TimedOut timed_out = {},
                   std::chrono::milliseconds timeout = std::chrono::milliseconds::max());
  ~OpQueue();
  OpQueue(const OpQueue&) = delete;
  OpQueue& operator=(const OpQueue&) = delete;

  WorkPtr submit(CollectiveCall call, Run run, bool small = false);

  // How collective_now.h names this queue's group ("shm rank 1 of 4"); set before the first submit.
  void setLabel(std::string label) { label_ = std::move(label); }
  // The user's calls go in the flight recorder (flight_recorder.h) as those of the group named
  // by the label, this process being `rank` of its `size`; set after the label, before the first
  // submit. Not for a group whose operations are steps of a larger group's.
  void recordFlights(int size, int rank);

 private:
  struct Task {
    WorkPtr work;
    CollectiveCall call;
    Run run;
    uint64_t flight = 0;  // its flight recorder entry (flight_recorder.h)
    bool queued = false;  // run by the worker thread, after it was queued
  };
  void loop();
  void execute(Task& task);      // one at a time: `running_` is held around it
  void begin(const Task& task);  // with mutex_ held: `task` runs now
  void watchLoop();
  void timerLoop();

  FailureText failure_text_;
  std::string label_;
  int flight_group_ = kNoFlightGroup;
  Stalled stalled_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  uint64_t submitted_ = 0;  // the last sequence number given
  bool running_ = false;    // an operation is executing (on the worker or a caller's thread)
  CollectiveCall current_;  // the one executing, and since when
  std::chrono::steady_clock::time_point current_since_;
  RunningDeadline current_ran_{std::chrono::steady_clock::duration::max(), std::chrono::milliseconds(1)};  // timer's
  bool stopping_ = false;
  std::string broken_;  // the first failure; read and written only inside execute()
  std::thread thread_;
  std::condition_variable watch_wake_;
  std::thread watch_thread_;
  TimedOut timed_out_;
  std::chrono::milliseconds timeout_;
  std::condition_variable timer_wake_;
  std::thread timer_thread_;
};

// What a backend finds out about its failed operation (failure_clues.h).
using Investigate = std::function<Findings(const CollectiveCall& call, const std::exception& error,
                                           std::chrono::steady_clock::duration waited)>;

// The failure text of every CPU backend: "<operation> failed on rank R of N: <what>; <cause>",
// the cause from `diagnose` given what `investigate` found (which ranks did not arrive and
// what became of them), when it knows one. A verdict that ranks called different collectives
// replaces what and cause. A backend that runs one step of a larger group's operations
// (hierarchical_backend.h) names that `part` instead of its own operation, rank and size:
// the larger group's message says those.
OpQueue::FailureText groupFailureText(int rank, int size, Diagnose diagnose, Investigate investigate = {},
                                      std::string part = {});

}  // namespace accel
