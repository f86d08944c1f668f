// SPDX-License-Identifier: Apache-2.0
// Built when CUDA and NCCL were not found: NcclBackend exists so callers need no #ifdef, says
// it is not available, and refuses to be constructed (no CUDA device can be chosen either:
// cuda_devices_none.cc reports none).
#include "runtime/comm/nccl_backend.h"

#include <stdexcept>
#include <string>

#include "lib/common/error.h"

namespace accel {

class NcclBackend::Impl {};

bool NcclBackend::available() { return false; }

std::string NcclBackend::version() { return ""; }

NcclBackend::NcclBackend(Store&, int, int, int, NcclOptions) {
  throw Error("this build of accel has no NCCL backend", "rebuild with CUDA and NCCL under /usr/local/cuda");
}

NcclBackend::~NcclBackend() = default;

// Without a constructed backend nothing below can be reached: a call is a programming error.
namespace {
[[noreturn]] void unreachable(const char* what) {
  throw std::logic_error(std::string("NcclBackend::") + what + " in a runtime built without NCCL");
}
}  // namespace

int NcclBackend::rank() const { unreachable("rank"); }
int NcclBackend::size() const { unreachable("size"); }
WorkPtr NcclBackend::allReduce(Tensor, ReduceOp) { unreachable("allReduce"); }
WorkPtr NcclBackend::broadcast(Tensor, int) { unreachable("broadcast"); }
WorkPtr NcclBackend::allGather(Tensor, Tensor) { unreachable("allGather"); }
WorkPtr NcclBackend::allGatherV(Tensor, Tensor, std::vector<size_t>) { unreachable("allGatherV"); }
WorkPtr NcclBackend::reduceScatter(Tensor, Tensor, ReduceOp) { unreachable("reduceScatter"); }
WorkPtr NcclBackend::gather(Tensor, Tensor, int) { unreachable("gather"); }
WorkPtr NcclBackend::scatter(Tensor, Tensor, int) { unreachable("scatter"); }
WorkPtr NcclBackend::barrier() { unreachable("barrier"); }

}  // namespace accel
