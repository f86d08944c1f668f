// SPDX-License-Identifier: Apache-2.0
// Collectives on CUDA memory through NCCL (built only when CUDA and NCCL were found). Rank 0
// creates the ncclUniqueId and shares it through the store. Each operation waits for the work
// queued so far on the legacy default stream, runs on the group's own stream, and completes its
// Work from a watchdog thread, which also turns an asynchronous NCCL error or an operation
// exceeding the timeout into an error (ncclCommAbort) naming the rank and the operation.
// Thread-safe; one communicator per object.
#pragma once

#include <functional>
#include <memory>

#include "lib/common/defaults.h"
#include "runtime/comm/backend.h"
#include "runtime/comm/failure_clues.h"
#include "runtime/store/store.h"

namespace accel {

struct NcclOptions {
  std::chrono::milliseconds timeout = defaults::kNcclTimeout;
  Diagnose diagnose;  // after a failure (failure_clues.h); NCCL cannot tell which rank is missing
};

class NcclBackend : public Backend {
 public:
  // Blocks until every rank has created its communicator on CUDA device `device`.
  NcclBackend(Store& store, int rank, int size, int device, NcclOptions options);
  ~NcclBackend() override;

  int rank() const override;
  int size() const override;
  const char* name() const override { return "nccl"; }

  WorkPtr allReduce(Tensor data, ReduceOp op) override;
  WorkPtr broadcast(Tensor data, int root) override;
  WorkPtr allGather(Tensor input, Tensor output) override;
  WorkPtr allGatherV(Tensor input, Tensor output, std::vector<size_t> counts) override;
  WorkPtr reduceScatter(Tensor input, Tensor output, ReduceOp op) override;
  WorkPtr gather(Tensor input, Tensor output, int root) override;
  WorkPtr scatter(Tensor input, Tensor output, int root) override;
  WorkPtr barrier() override;

  // NCCL's version as "2.28.9" ("" in a build without NCCL).
  static std::string version();
  // False in a build without CUDA and NCCL (nccl_backend_none.cc), whose constructor throws.
  static bool available();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel
