// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/nccl/nccl_communicator.h"

#include <cstring>

#include <fmt/format.h>

#include "runtime/comm/cuda_check.h"

namespace accel::comm::nccl {

namespace {

void check(cudaError_t e, const char* what) { checkCuda(e, what); }
void check(ncclResult_t r, const char* what) { checkNccl(r, what); }

}  // namespace

void checkNccl(ncclResult_t r, const char* what, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  const char* last = comm ? ncclGetLastError(comm) : nullptr;
  throw CommError(fmt::format("{}: NCCL error: {}{}", what, ncclGetErrorString(r),
                              last && *last ? std::string(" (") + last + ")" : ""));
}

NcclCommunicator::NcclCommunicator(Store& store, int rank, int size, int device, NcclOptions options)
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

NcclCommunicator::~NcclCommunicator() {
  stop_ = true;
  if (watchdog_.joinable()) watchdog_.join();
  if (!aborted_) ncclCommDestroy(comm_);
  cudaFree(scratch_);
  cudaStreamDestroy(stream_);
}

WorkPtr NcclCommunicator::launch(CollectiveCall call, const std::function<void(cudaStream_t)>& op) {
  std::lock_guard<std::mutex> lock(launch_mutex_);
  const std::string description = call.describe();
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
    call.seq = ++launched_;
    p.flight = flightBegin(flight_group_, call, true, flight::ticks());
    op(stream_);
    check(cudaEventRecord(p.done, stream_), "cudaEventRecord");
  } catch (...) {
    flightEnd(p.flight, false, flight::ticks());
    destroyEvents(p);
    throw;
  }
  std::lock_guard<std::mutex> pending_lock(pending_mutex_);
  pending_.push_back(p);
  return p.work;
}

void NcclCommunicator::abandon() {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  if (!aborted_) failAll("this rank gave up the operation (a part of it through another backend failed)");
}

void NcclCommunicator::destroyEvents(Pending& p) {
  if (p.start) cudaEventDestroy(p.start);
  if (p.done) cudaEventDestroy(p.done);
  p.start = p.done = nullptr;
}

void NcclCommunicator::failAll(const std::string& reason) {
  abort_reason_ = reason;
  aborted_ = true;
  ncclCommAbort(comm_);
  std::string cause = options_.diagnose ? options_.diagnose(FailureClues{}) : "";
  for (auto& p : pending_) {
    p.work->complete(fmt::format("{} failed on rank {} of {}: {}{}", p.work->description(), rank_, size_, reason,
                                 cause.empty() ? "" : "; " + cause));
    flightEnd(p.flight, false, flight::ticks());
    destroyEvents(p);
  }
  pending_.clear();
}

// Completes finished operations in order; aborts on an async error or a timeout.
void NcclCommunicator::watch() {
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
        flightEnd(p.flight, true, flight::ticks());
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
      } else if (!pending_.empty() && std::chrono::steady_clock::now() - pending_.front().started > options_.timeout) {
        failAll(fmt::format("no progress for {} s (a rank is missing or stuck); the communicator was aborted",
                            std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count()));
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

bool NcclCommunicator::idle() {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  return pending_.empty() || aborted_;
}

}  // namespace accel::comm::nccl
