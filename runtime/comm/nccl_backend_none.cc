// SPDX-License-Identifier: Apache-2.0
// Built when CUDA and NCCL were not found: NcclBackend exists so callers need no #ifdef, says
// it is not available, and refuses to be constructed (no CUDA device can be chosen either:
// cuda_devices_none.cc reports none).
#include "runtime/comm/nccl_backend.h"

#include "lib/common/error.h"

namespace accel {

class NcclBackend::Impl {};

bool NcclBackend::available() { return false; }

std::string NcclBackend::version() { return ""; }

NcclBackend::NcclBackend(Store&, int, int, int, NcclOptions) {
  throw Error("this build of accel has no NCCL backend", "rebuild with CUDA and NCCL under /usr/local/cuda");
}

NcclBackend::~NcclBackend() = default;

// Unreachable: no NcclBackend is ever constructed in this build.
int NcclBackend::rank() const { return 0; }
int NcclBackend::size() const { return 0; }
WorkPtr NcclBackend::allReduce(Tensor, ReduceOp) { return nullptr; }
WorkPtr NcclBackend::broadcast(Tensor, int) { return nullptr; }
WorkPtr NcclBackend::allGather(Tensor, Tensor) { return nullptr; }
WorkPtr NcclBackend::allGatherV(Tensor, Tensor, std::vector<size_t>) { return nullptr; }
WorkPtr NcclBackend::reduceScatter(Tensor, Tensor, ReduceOp) { return nullptr; }
WorkPtr NcclBackend::gather(Tensor, Tensor, int) { return nullptr; }
WorkPtr NcclBackend::scatter(Tensor, Tensor, int) { return nullptr; }
WorkPtr NcclBackend::barrier() { return nullptr; }

}  // namespace accel
