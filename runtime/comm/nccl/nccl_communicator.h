// SPDX-License-Identifier: Apache-2.0
// One NCCL communicator of NcclBackend (nccl_backend.h), built only with CUDA and NCCL: rank 0
// creates the ncclUniqueId and shares it through the store; operations run on the group's own
// stream after the work queued so far on the legacy default stream; a watchdog thread completes
// each operation's Work in order and turns an asynchronous NCCL error, a CUDA error or an
// operation past the timeout into ncclCommAbort and an error on every pending Work, naming the
// rank and the operation. Thread-safe.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/comm/flight_recorder.h"
#include "runtime/comm/nccl/nccl_backend.h"
#include "runtime/comm/work.h"

namespace accel::comm::nccl {

// A failed NCCL call throws CommError "WHAT: NCCL error: TEXT (NCCL's last error on `comm`)".
void checkNccl(ncclResult_t result, const char* what, ncclComm_t comm = nullptr);

class NcclCommunicator {
 public:
  // Blocks until every rank has created its communicator on CUDA device `device`.
  NcclCommunicator(Store& store, int rank, int size, int device, NcclOptions options);
  ~NcclCommunicator();  // waits for pending operations (or the abort)
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  ncclComm_t comm() const { return comm_; }
  float* scratch() const { return scratch_; }  // one float of device memory (the barrier's)

  // Runs `op` on the group's stream after the default stream's queued work; returns its Work.
  // `call` is numbered here, in launch order, and recorded in the flight recorder's group set by
  // recordFlights() as running at once (the launch) and ended when its stream finished it.
  WorkPtr launch(CollectiveCall call, const std::function<void(cudaStream_t)>& op);
  void recordFlights(int group) { flight_group_ = group; }
  // This rank gave up its operation: the communicator is aborted, so peers' operations fail too.
  void abandon();

 private:
  struct Pending {
    WorkPtr work;
    cudaEvent_t start, done;  // around the operation on the group's stream: its GPU run time
    std::chrono::steady_clock::time_point started;
    uint64_t flight = kNoFlightEntry;  // its flight recorder entry
  };
  static void destroyEvents(Pending& p);
  void failAll(const std::string& reason);  // with pending_mutex_ held
  void watch();                             // the watchdog thread
  bool idle();

  int rank_, size_, device_;
  NcclOptions options_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  float* scratch_ = nullptr;
  std::mutex launch_mutex_, pending_mutex_;
  std::deque<Pending> pending_;
  int flight_group_ = kNoFlightGroup;
  uint64_t launched_ = 0;  // under launch_mutex_
  std::atomic<bool> stop_{false};
  std::atomic<bool> aborted_{false};
  std::string abort_reason_;
  std::thread watchdog_;
};

}  // namespace accel::comm::nccl
