// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/nccl/nccl_backend.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <fmt/format.h>

#include "runtime/comm/collective_call.h"
#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/cuda_check.h"
#include "runtime/comm/flight_recorder.h"
#include "runtime/comm/nccl/nccl_communicator.h"

namespace accel::comm::nccl {

namespace {

void check(cudaError_t e, const char* what) { checkCuda(e, what); }
void check(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) { checkNccl(r, what, comm); }

ncclDataType_t ncclType(DataType t) {
  switch (t) {
    case DataType::F32: return ncclFloat32;
    case DataType::F64: return ncclFloat64;
    case DataType::F16: return ncclFloat16;
    case DataType::BF16: return ncclBfloat16;
    case DataType::I32: return ncclInt32;
    case DataType::I64: return ncclInt64;
    case DataType::U8: return ncclUint8;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Product: return ncclProd;
  }
  return ncclSum;
}

}  // namespace

NcclBackend::NcclBackend(Store& store, int rank, int size, int device, NcclOptions options)
    : impl_(std::make_unique<NcclCommunicator>(store, rank, size, device, std::move(options))) {
  // Its calls are recorded as launched and as their stream finished them (nccl_communicator.h).
  impl_->recordFlights(flightGroup(fmt::format("nccl rank {} of {}", rank, size), size, rank));
}

NcclBackend::~NcclBackend() = default;

int NcclBackend::rank() const { return impl_->rank(); }
int NcclBackend::size() const { return impl_->size(); }

bool NcclBackend::available() { return true; }

std::string NcclBackend::version() {
  int code = 0;
  ncclGetVersion(&code);
  return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

Backend::Memory NcclBackend::memory() const {
  return {DeviceType::CUDA, "NCCL collectives", "use the Gloo backend for CPU tensors"};
}

void NcclBackend::abandon() { impl_->abandon(); }

WorkPtr NcclBackend::startAllReduce(const CollectiveCall& call, Tensor t) {
  auto* c = impl_->comm();
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclAllReduce(t.data, t.data, t.count, ncclType(t.dtype), ncclOp(call.op), c, s), "ncclAllReduce", c);
  });
}

WorkPtr NcclBackend::startBroadcast(const CollectiveCall& call, Tensor t) {
  auto* c = impl_->comm();
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclBroadcast(t.data, t.data, t.count, ncclType(t.dtype), call.root, c, s), "ncclBroadcast", c);
  });
}

WorkPtr NcclBackend::startAllGather(const CollectiveCall& call, Tensor in, Tensor out) {
  auto* c = impl_->comm();
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclAllGather(in.data, out.data, in.count, ncclType(in.dtype), c, s), "ncclAllGather", c);
  });
}

// Unequal sizes: every rank broadcasts its part into its place in the output, in one NCCL group.
WorkPtr NcclBackend::startAllGatherV(const CollectiveCall& call, Tensor in, Tensor out,
                                     const std::vector<size_t>& counts) {
  auto* c = impl_->comm();
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclGroupStart(), "ncclGroupStart");
    size_t offset = 0;
    for (int r = 0; r < impl_->size(); ++r) {
      Tensor dst = out.slice(offset, counts[static_cast<size_t>(r)]);
      const void* src = r == impl_->rank() ? in.data : dst.data;
      check(ncclBroadcast(src, dst.data, dst.count, ncclType(in.dtype), r, c, s), "ncclBroadcast", c);
      offset += dst.count;
    }
    check(ncclGroupEnd(), "ncclGroupEnd", c);
  });
}

WorkPtr NcclBackend::startReduceScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  auto* c = impl_->comm();
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclReduceScatter(in.data, out.data, out.count, ncclType(in.dtype), ncclOp(call.op), c, s),
          "ncclReduceScatter", c);
  });
}

// gather (`to_root`) and scatter: in one NCCL group, the root exchanges chunk r of its whole
// buffer with every other rank r and copies its own chunk on the device; the others send or
// receive their one chunk.
WorkPtr NcclBackend::startRooted(const CollectiveCall& call, Tensor whole, Tensor mine, bool to_root) {
  auto* c = impl_->comm();
  const int root = call.root;
  const auto type = ncclType(mine.dtype);
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclGroupStart(), "ncclGroupStart");
    if (impl_->rank() != root) {
      check(to_root ? ncclSend(mine.data, mine.count, type, root, c, s)
                    : ncclRecv(mine.data, mine.count, type, root, c, s),
            to_root ? "ncclSend" : "ncclRecv", c);
    }
    for (int r = 0; impl_->rank() == root && r < impl_->size(); ++r) {
      Tensor chunk = whole.slice(static_cast<size_t>(r) * mine.count, mine.count);
      if (r == root) {
        check(cudaMemcpyAsync(to_root ? chunk.data : mine.data, to_root ? mine.data : chunk.data, mine.bytes(),
                              cudaMemcpyDeviceToDevice, s),
              "cudaMemcpyAsync");
      } else {
        check(
            to_root ? ncclRecv(chunk.data, mine.count, type, r, c, s) : ncclSend(chunk.data, mine.count, type, r, c, s),
            to_root ? "ncclRecv" : "ncclSend", c);
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd", c);
  });
}

WorkPtr NcclBackend::startGather(const CollectiveCall& call, Tensor in, Tensor out) {
  return startRooted(call, out, in, true);
}

WorkPtr NcclBackend::startScatter(const CollectiveCall& call, Tensor in, Tensor out) {
  return startRooted(call, in, out, false);
}

// One send and one receive per peer in one NCCL group; this rank's own part is a device copy.
WorkPtr NcclBackend::startAllToAllV(const CollectiveCall& call, Tensor in, Tensor out,
                                    const std::vector<size_t>& send_counts, const std::vector<size_t>& recv_counts) {
  auto* c = impl_->comm();
  const std::vector<size_t> sent_at = offsetsOf(send_counts), received_at = offsetsOf(recv_counts);
  return impl_->launch(call, [&](cudaStream_t s) {
    const auto type = ncclType(in.dtype);
    const size_t me = static_cast<size_t>(impl_->rank());
    Tensor own = out.slice(received_at[me], recv_counts[me]);
    if (own.count) {
      check(cudaMemcpyAsync(own.data, in.slice(sent_at[me], send_counts[me]).data, own.bytes(),
                            cudaMemcpyDeviceToDevice, s),
            "cudaMemcpyAsync");
    }
    check(ncclGroupStart(), "ncclGroupStart");
    for (size_t r = 0; r < send_counts.size(); ++r) {
      if (r == me) continue;
      const int peer = static_cast<int>(r);
      if (send_counts[r]) {
        check(ncclSend(in.slice(sent_at[r], send_counts[r]).data, send_counts[r], type, peer, c, s), "ncclSend", c);
      }
      if (recv_counts[r]) {
        check(ncclRecv(out.slice(received_at[r], recv_counts[r]).data, recv_counts[r], type, peer, c, s), "ncclRecv",
              c);
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd", c);
  });
}

WorkPtr NcclBackend::startBarrier(const CollectiveCall& call) {
  auto* c = impl_->comm();
  float* scratch = impl_->scratch();
  return impl_->launch(call, [&](cudaStream_t s) {
    check(ncclAllReduce(scratch, scratch, 1, ncclFloat32, ncclSum, c, s), "ncclAllReduce (barrier)", c);
  });
}

}  // namespace accel::comm::nccl
