// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/nccl_backend.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "runtime/comm/collective_call.h"
#include "runtime/comm/collective_shapes.h"
#include "runtime/comm/cuda_check.h"

namespace accel {

namespace {

void check(cudaError_t e, const char* what) { checkCuda(e, what); }

void check(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  const char* last = comm ? ncclGetLastError(comm) : nullptr;
  throw CommError(fmt::format("{}: NCCL error: {}{}", what, ncclGetErrorString(r),
                              last && *last ? std::string(" (") + last + ")" : ""));
}

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

struct Pending {
  WorkPtr work;
  cudaEvent_t start, done;  // around the operation on the group's stream: its GPU run time
  std::chrono::steady_clock::time_point started;
};

}  // namespace

class NcclBackend::Impl {
 public:
  Impl(Store& store, int rank, int size, int device, NcclOptions options)
      : rank_(rank), size_(size), device_(device), options_(std::move(options)) {
    check(cudaSetDevice(device), "cudaSetDevice");
    ncclUniqueId id;
    if (rank == 0) {
      check(ncclGetUniqueId(&id), "ncclGetUniqueId");
      store.set("nccl/unique_id", Bytes(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + sizeof id));
    } else {
      Bytes b = store.get("nccl/unique_id");
      if (b.size() != sizeof id) throw CommError("nccl: the unique id in the store has the wrong size");
      std::memcpy(&id, b.data(), sizeof id);
    }
    check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&scratch_, sizeof(float)), "cudaMalloc");
    watchdog_ = std::thread([this] { watch(); });
  }

  ~Impl() {
    stop_ = true;
    if (watchdog_.joinable()) watchdog_.join();
    if (!aborted_) ncclCommDestroy(comm_);
    cudaFree(scratch_);
    cudaStreamDestroy(stream_);
  }

  int rank_, size_, device_;
  NcclOptions options_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  float* scratch_ = nullptr;

  // Runs `op` on the group's stream after the default stream's queued work; returns its Work.
  WorkPtr launch(const std::string& description, const std::function<void(cudaStream_t)>& op) {
    std::lock_guard<std::mutex> lock(launch_mutex_);
    if (aborted_) throw CommError(description + " not run: the NCCL communicator was aborted: " + abort_reason_);
    check(cudaSetDevice(device_), "cudaSetDevice");
    Pending p{std::make_shared<Work>(description), nullptr, nullptr, std::chrono::steady_clock::now()};
    try {  // the events are destroyed on every failure path
      cudaEvent_t ready = nullptr;
      check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
      cudaError_t waited = cudaEventRecord(ready, nullptr);
      if (waited == cudaSuccess) waited = cudaStreamWaitEvent(stream_, ready, 0);
      cudaEventDestroy(ready);
      check(waited, "ordering after the default stream");
      check(cudaEventCreate(&p.start), "cudaEventCreate");
      check(cudaEventCreate(&p.done), "cudaEventCreate");
      check(cudaEventRecord(p.start, stream_), "cudaEventRecord");
      op(stream_);
      check(cudaEventRecord(p.done, stream_), "cudaEventRecord");
    } catch (...) {
      destroyEvents(p);
      throw;
    }
    std::lock_guard<std::mutex> pending_lock(pending_mutex_);
    pending_.push_back(p);
    return p.work;
  }

 private:
  std::mutex launch_mutex_, pending_mutex_;
  std::deque<Pending> pending_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> aborted_{false};
  std::string abort_reason_;
  std::thread watchdog_;

  static void destroyEvents(Pending& p) {
    if (p.start) cudaEventDestroy(p.start);
    if (p.done) cudaEventDestroy(p.done);
    p.start = p.done = nullptr;
  }

  void failAll(const std::string& reason) {
    abort_reason_ = reason;
    aborted_ = true;
    ncclCommAbort(comm_);
    std::string cause = options_.diagnose ? options_.diagnose(FailureClues{}) : "";
    for (auto& p : pending_) {
      p.work->complete(fmt::format("{} failed on rank {} of {}: {}{}", p.work->description(), rank_, size_, reason,
                                   cause.empty() ? "" : "; " + cause));
      destroyEvents(p);
    }
    pending_.clear();
  }

  // Completes finished operations in order; aborts on an async error or a timeout.
  void watch() {
    cudaSetDevice(device_);
    while (!stop_ || !idle()) {
      {
        std::lock_guard<std::mutex> lock(pending_mutex_);
        cudaError_t state = cudaSuccess;
        while (!pending_.empty() && (state = cudaEventQuery(pending_.front().done)) == cudaSuccess) {
          Pending& p = pending_.front();
          float ms = 0;
          if (cudaEventElapsedTime(&ms, p.start, p.done) == cudaSuccess) {
            p.work->setRunTime(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double, std::milli>(ms)));
          }
          destroyEvents(p);
          p.work->complete();
          pending_.pop_front();
        }
        ncclResult_t async = ncclSuccess;
        if (!pending_.empty() && state != cudaSuccess && state != cudaErrorNotReady) {
          cudaGetLastError();  // a sticky error stays; the message is what matters
          failAll(fmt::format("CUDA error while it ran: {}", cudaGetErrorString(state)));
        } else if (!aborted_ && ncclCommGetAsyncError(comm_, &async) == ncclSuccess && async != ncclSuccess &&
                   async != ncclInProgress) {
          failAll(fmt::format("NCCL reported an asynchronous error: {}", ncclGetErrorString(async)));
        } else if (!pending_.empty() &&
                   std::chrono::steady_clock::now() - pending_.front().started > options_.timeout) {
          failAll(fmt::format("no progress for {} s (a rank is missing or stuck); the communicator was aborted",
                              std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count()));
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  bool idle() {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    return pending_.empty() || aborted_;
  }
};

NcclBackend::NcclBackend(Store& store, int rank, int size, int device, NcclOptions options)
    : impl_(std::make_unique<Impl>(store, rank, size, device, std::move(options))) {}

NcclBackend::~NcclBackend() = default;

int NcclBackend::rank() const { return impl_->rank_; }
int NcclBackend::size() const { return impl_->size_; }

bool NcclBackend::available() { return true; }

std::string NcclBackend::version() {
  int code = 0;
  ncclGetVersion(&code);
  return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

namespace {
void requireCuda(const Tensor& t, const char* op) {
  if (t.device != DeviceType::CUDA)
    throw CommError(fmt::format("nccl {}: the tensor is in CPU memory", op), "use the Gloo backend for CPU tensors");
}
}  // namespace

WorkPtr NcclBackend::allReduce(Tensor t, ReduceOp op) {
  requireCuda(t, "all_reduce");
  if (impl_->size_ == 1 || t.count == 0)
    return completedWork(CollectiveCall::reduction(CallKind::AllReduce, t, op).describe());  // in place: nothing to do
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::reduction(CallKind::AllReduce, t, op).describe(), [&](cudaStream_t s) {
    check(ncclAllReduce(t.data, t.data, t.count, ncclType(t.dtype), ncclOp(op), c, s), "ncclAllReduce", c);
  });
}

WorkPtr NcclBackend::broadcast(Tensor t, int root) {
  requireCuda(t, "broadcast");
  if (impl_->size_ == 1 || t.count == 0)
    return completedWork(CollectiveCall::rooted(CallKind::Broadcast, t, root).describe());
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::rooted(CallKind::Broadcast, t, root).describe(), [&](cudaStream_t s) {
    check(ncclBroadcast(t.data, t.data, t.count, ncclType(t.dtype), root, c, s), "ncclBroadcast", c);
  });
}

WorkPtr NcclBackend::allGather(Tensor in, Tensor out) {
  requireCuda(in, "all_gather");
  checkAllGather(in, out, impl_->size_);
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::of(CallKind::AllGather, in.dtype, in.count).describe(), [&](cudaStream_t s) {
    check(ncclAllGather(in.data, out.data, in.count, ncclType(in.dtype), c, s), "ncclAllGather", c);
  });
}

// Unequal sizes: every rank broadcasts its part into its place in the output, in one NCCL group.
WorkPtr NcclBackend::allGatherV(Tensor in, Tensor out, std::vector<size_t> counts) {
  requireCuda(in, "all_gather_v");
  const size_t total = checkAllGatherV(in, out, counts, impl_->size_, impl_->rank_);
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::of(CallKind::AllGatherV, in.dtype, total).describe(), [&](cudaStream_t s) {
    check(ncclGroupStart(), "ncclGroupStart");
    size_t offset = 0;
    for (int r = 0; r < impl_->size_; ++r) {
      Tensor dst = out.slice(offset, counts[static_cast<size_t>(r)]);
      const void* src = r == impl_->rank_ ? in.data : dst.data;
      check(ncclBroadcast(src, dst.data, dst.count, ncclType(in.dtype), r, c, s), "ncclBroadcast", c);
      offset += dst.count;
    }
    check(ncclGroupEnd(), "ncclGroupEnd", c);
  });
}

WorkPtr NcclBackend::reduceScatter(Tensor in, Tensor out, ReduceOp op) {
  requireCuda(in, "reduce_scatter");
  checkReduceScatter(in, out, impl_->size_);
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::reduction(CallKind::ReduceScatter, out, op).describe(), [&](cudaStream_t s) {
    check(ncclReduceScatter(in.data, out.data, out.count, ncclType(in.dtype), ncclOp(op), c, s), "ncclReduceScatter",
          c);
  });
}

WorkPtr NcclBackend::gather(Tensor in, Tensor out, int root) {
  requireCuda(in, "gather");
  checkRooted("gather", out, in.count, impl_->size_, impl_->rank_, root);
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::rooted(CallKind::Gather, in, root).describe(), [&](cudaStream_t s) {
    check(ncclGroupStart(), "ncclGroupStart");
    if (impl_->rank_ == root) {
      for (int r = 0; r < impl_->size_; ++r) {
        Tensor dst = out.slice(static_cast<size_t>(r) * in.count, in.count);
        if (r == root) {
          check(cudaMemcpyAsync(dst.data, in.data, in.bytes(), cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
        } else {
          check(ncclRecv(dst.data, in.count, ncclType(in.dtype), r, c, s), "ncclRecv", c);
        }
      }
    } else {
      check(ncclSend(in.data, in.count, ncclType(in.dtype), root, c, s), "ncclSend", c);
    }
    check(ncclGroupEnd(), "ncclGroupEnd", c);
  });
}

WorkPtr NcclBackend::scatter(Tensor in, Tensor out, int root) {
  requireCuda(out, "scatter");
  checkRooted("scatter", in, out.count, impl_->size_, impl_->rank_, root);
  auto* c = impl_->comm_;
  return impl_->launch(CollectiveCall::rooted(CallKind::Scatter, out, root).describe(), [&](cudaStream_t s) {
    check(ncclGroupStart(), "ncclGroupStart");
    if (impl_->rank_ == root) {
      for (int r = 0; r < impl_->size_; ++r) {
        Tensor src = in.slice(static_cast<size_t>(r) * out.count, out.count);
        if (r == root) {
          check(cudaMemcpyAsync(out.data, src.data, out.bytes(), cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
        } else {
          check(ncclSend(src.data, out.count, ncclType(out.dtype), r, c, s), "ncclSend", c);
        }
      }
    } else {
      check(ncclRecv(out.data, out.count, ncclType(out.dtype), root, c, s), "ncclRecv", c);
    }
    check(ncclGroupEnd(), "ncclGroupEnd", c);
  });
}

WorkPtr NcclBackend::barrier() {
  auto* c = impl_->comm_;
  float* scratch = impl_->scratch_;
  return impl_->launch("barrier", [&](cudaStream_t s) {
    check(ncclAllReduce(scratch, scratch, 1, ncclFloat32, ncclSum, c, s), "ncclAllReduce (barrier)", c);
  });
}

}  // namespace accel
