// SPDX-License-Identifier: Apache-2.0
// Built when CUDA and NCCL were not found: NcclBackend exists so callers need no #ifdef, says
// it is not available, and refuses to be constructed (no CUDA device can be chosen either:
// cuda_devices_none.cc reports none).
#include "runtime/comm/nccl/nccl_backend.h"

#include <stdexcept>
#include <string>

#include "lib/common/error.h"

namespace accel::comm::nccl {

class NcclCommunicator {};

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
Backend::Memory NcclBackend::memory() const { unreachable("memory"); }
void NcclBackend::abandon() { unreachable("abandon"); }
WorkPtr NcclBackend::startAllReduce(const CollectiveCall&, Tensor) { unreachable("allReduce"); }
WorkPtr NcclBackend::startBroadcast(const CollectiveCall&, Tensor) { unreachable("broadcast"); }
WorkPtr NcclBackend::startAllGather(const CollectiveCall&, Tensor, Tensor) { unreachable("allGather"); }
WorkPtr NcclBackend::startAllGatherV(const CollectiveCall&, Tensor, Tensor, const std::vector<size_t>&) {
  unreachable("allGatherV");
}
WorkPtr NcclBackend::startReduceScatter(const CollectiveCall&, Tensor, Tensor) { unreachable("reduceScatter"); }
WorkPtr NcclBackend::startGather(const CollectiveCall&, Tensor, Tensor) { unreachable("gather"); }
WorkPtr NcclBackend::startScatter(const CollectiveCall&, Tensor, Tensor) { unreachable("scatter"); }
WorkPtr NcclBackend::startAllToAllV(const CollectiveCall&, Tensor, Tensor, const std::vector<size_t>&,
                                    const std::vector<size_t>&) {
  unreachable("allToAllV");
}
WorkPtr NcclBackend::startBarrier(const CollectiveCall&) { unreachable("barrier"); }

}  // namespace accel::comm::nccl
