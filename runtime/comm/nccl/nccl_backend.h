// SPDX-License-Identifier: Apache-2.0
// Collectives on CUDA memory through NCCL (built only when CUDA and NCCL were found): the steps
// of every collective as NCCL calls on one communicator (nccl_communicator.h: its stream, its
// watchdog, its timeout). Thread-safe; one communicator per object.
#pragma once

#include <functional>
#include <memory>

#include "lib/common/defaults.h"
#include "runtime/comm/backend.h"
#include "runtime/comm/failure_clues.h"
#include "runtime/store/store.h"

namespace accel::comm::nccl {

class NcclCommunicator;  // nccl_communicator.h

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

  Memory memory() const override;
  // Peers learn from the communicator's abort (ncclCommAbort) that this rank gave up.
  void abandon() override;

  // NCCL's version as "2.28.9" ("" in a build without NCCL).
  static std::string version();
  // False in a build without CUDA and NCCL (nccl_backend_none.cc), whose constructor throws.
  static bool available();

 protected:
  WorkPtr startAllReduce(const CollectiveCall& call, Tensor data) override;
  WorkPtr startBroadcast(const CollectiveCall& call, Tensor data) override;
  WorkPtr startAllGather(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                          const std::vector<size_t>& counts) override;
  WorkPtr startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startGather(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startScatter(const CollectiveCall& call, Tensor in, Tensor out) override;
  WorkPtr startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out, const std::vector<size_t>& send_counts,
                         const std::vector<size_t>& recv_counts) override;
  WorkPtr startBarrier(const CollectiveCall& call) override;

 private:
  WorkPtr startRooted(const CollectiveCall& call, Tensor whole, Tensor mine, bool to_root);

  std::unique_ptr<NcclCommunicator> impl_;
};

}  // namespace accel::comm::nccl

// Public API, in the front door's namespace: state/, accel-bench and the tests name them so.
namespace accel {
using comm::nccl::NcclBackend;
using comm::nccl::NcclOptions;
}  // namespace accel
