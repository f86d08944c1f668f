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
  WorkPtr launch(const std::string& description, const std::function<void(cudaStream_t)>& op);
  // This rank gave up its operation: the communicator is aborted, so peers' operations fail too.
  void abandon();

 private:
  struct Pending {
    WorkPtr work;
    cudaEvent_t start, done;  // around the operation on the group's stream: its GPU run time
    std::chrono::steady_clock::time_point started;
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
  std::atomic<bool> stop_{false};
  std::atomic<bool> aborted_{false};
  std::string abort_reason_;
  std::thread watchdog_;
};

}  // namespace accel::comm::nccl
