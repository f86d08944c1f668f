// SPDX-License-Identifier: Apache-2.0
// The API a worker includes: Accelerate's Accelerator / PartialState for C++ training loops.
// Constructed from the launcher's environment (or as a world of one without a launcher), it
// meets the other ranks through the TCPStore that rank 0 hosts, and offers collectives and the
// main-process helpers. Collective helpers must be called by every rank in the same order.
// Like Python, it ignores SIGPIPE (when still at its default) so a dead peer is an error, not death.
// One Accelerator per process; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "lib/common/defaults.h"
#include "runtime/comm/cpu_transport.h"
#include "runtime/comm/process_group.h"
#include "runtime/state/distributed_env.h"
#include "runtime/state/rank_inquiry.h"
#include "runtime/state/runtime_settings.h"

namespace accel {

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  std::string str() const { return type == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index); }
};

struct AcceleratorOptions {
  // How long rendezvous and each collective wait for the peers before failing, naming them.
  // Unset: $ACCEL_COLLECTIVE_TIMEOUT (seconds; `accel launch --collective_timeout` sets it), else
  // 10 minutes. Accelerate's InitProcessGroupKwargs(timeout=...).
  std::optional<std::chrono::milliseconds> timeout = std::nullopt;
  bool cpu = false;  // force CPU (also ACCELERATE_USE_CPU=True)
};

class Accelerator {
 public:
  explicit Accelerator(AcceleratorOptions options = {});
  // Leaves cleanly: every rank meets at a last barrier; rank 0's store server stops only after
  // every client has gone.
  ~Accelerator();
  Accelerator(const Accelerator&) = delete;
  Accelerator& operator=(const Accelerator&) = delete;

  int processIndex() const { return env_.rank; }
  int localProcessIndex() const { return env_.local_rank; }
  int numProcesses() const { return env_.world_size; }
  const Device& device() const { return device_; }
  bool isMainProcess() const { return env_.rank == 0; }
  bool isLocalMainProcess() const { return env_.local_rank == 0; }
  bool isLastProcess() const { return env_.rank == env_.world_size - 1; }
  const std::string& mixedPrecision() const { return env_.mixed_precision; }
  int gradientAccumulationSteps() const { return env_.gradient_accumulation_steps; }
  const DistributedEnv& env() const { return env_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  void waitForEveryone();
  // The main process runs `fn` first; the others run it once it has finished (e.g. a download).
  template <typename F> void mainProcessFirst(F&& fn);
  template <typename F> void onMainProcess(F&& fn) {
    if (isMainProcess()) fn();
  }
  template <typename F> void onLocalMainProcess(F&& fn) {
    if (isLocalMainProcess()) fn();
  }
  template <typename F> void onLastProcess(F&& fn) {
    if (isLastProcess()) fn();
  }
  // Prints one line on the main process only.
  void print(const std::string& line) const;

  // Every rank's values, concatenated in rank order (lengths may differ between ranks).
  template <typename T> std::vector<T> gather(const std::vector<T>& local);
  // gather() of shares made by splitBetweenProcesses(items, true) of `dataset_size` items,
  // without the duplicates that padded the short shares: exactly the items, in order.
  template <typename T> std::vector<T> gatherForMetrics(const std::vector<T>& local, size_t dataset_size);
  // All-reduce in place.
  template <typename T> void reduce(std::vector<T>& data, ReduceOp op = ReduceOp::Sum);
  // `root`'s vector (size and contents) to every rank.
  template <typename T> void broadcast(std::vector<T>& data, int root = 0);
  // Pads every rank's vector to the longest one, with `pad` at the end (or the start).
  template <typename T>
  std::vector<T> padAcrossProcesses(const std::vector<T>& data, T pad = T{}, bool pad_first = false);
  // This rank's share of `items`: contiguous, the first (n % world) ranks one longer; with
  // `apply_padding`, short ranks repeat their last item so every share has the same length.
  template <typename T>
  std::vector<T> splitBetweenProcesses(const std::vector<T>& items, bool apply_padding = false) const;

  // Seeds rng() (and std::rand) with `seed`, or seed + rank when `per_process`. Returns it.
  uint64_t setSeed(uint64_t seed, bool per_process = false);
  std::mt19937_64& rng() { return rng_; }
  // rng()'s state as bytes, for checkpoints, and back (Error when the bytes are not one).
  std::vector<uint8_t> rngState() const;
  void loadRngState(const std::vector<uint8_t>& state);

  // All ranks, CPU memory: shared memory among ranks on one machine, Gloo between machines
  // (comm/cpu_transport.h).
  ProcessGroup& processGroup() { return *group_; }
  // All ranks, for memory on device(): NCCL on a CUDA device, else processGroup(). Made on the
  // first call, which every rank must make (it is a collective).
  ProcessGroup& deviceProcessGroup();
  Store& store() { return *store_; }

 private:
  std::vector<size_t> lengths(size_t mine);  // every rank's `mine`, in rank order (collective)
  template <typename T> std::vector<T> gatherWithCounts(const std::vector<T>& local, const std::vector<size_t>& counts);
  DistributedEnv env_;
  RuntimeSettings settings_;
  Device device_;
  std::unique_ptr<Store> store_;
  std::shared_ptr<RankInquiry> inquiry_;  // what the groups' failures say of missing ranks
  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<ProcessGroup> device_group_;
  std::chrono::milliseconds timeout_;
  CpuTransportOptions cpu_;  // how CPU groups are made (the device group's DETAIL check uses it too)
  bool detail_ = false;      // ACCEL_DEBUG=DETAIL or --debug: every collective checked first
  std::mt19937_64 rng_;
};

// ---- templates ----

template <typename F> void Accelerator::mainProcessFirst(F&& fn) {
  if (isMainProcess()) fn();
  waitForEveryone();
  if (!isMainProcess()) fn();
}

template <typename T> std::vector<T> Accelerator::gather(const std::vector<T>& local) {
  return gatherWithCounts(local, lengths(local.size()));
}

template <typename T>
std::vector<T> Accelerator::gatherWithCounts(const std::vector<T>& local, const std::vector<size_t>& counts) {
  size_t total = 0;
  for (size_t c : counts) total += c;
  std::vector<T> out(total);
  auto in = cpuTensor(const_cast<T*>(local.data()), local.size());
  group_->backend().allGatherV(in, cpuTensor(out.data(), out.size()), counts)->wait();
  return out;
}

template <typename T> std::vector<T> Accelerator::gatherForMetrics(const std::vector<T>& local, size_t dataset_size) {
  const auto counts = lengths(local.size());  // one exchange of lengths serves both steps
  auto all = gatherWithCounts(local, counts);
  // Rank r's real share, by splitBetweenProcesses' rule; anything beyond it is padding.
  const size_t world = counts.size(), base = dataset_size / world, extra = dataset_size % world;
  std::vector<T> out;
  size_t offset = 0;
  for (size_t r = 0; r < world; ++r) {
    size_t keep = std::min(counts[r], base + (r < extra ? 1 : 0));
    out.insert(out.end(), all.begin() + static_cast<long>(offset), all.begin() + static_cast<long>(offset + keep));
    offset += counts[r];
  }
  return out;
}

template <typename T> void Accelerator::reduce(std::vector<T>& data, ReduceOp op) {
  group_->backend().allReduce(cpuTensor(data.data(), data.size()), op)->wait();
}

template <typename T> void Accelerator::broadcast(std::vector<T>& data, int root) {
  int64_t n = static_cast<int64_t>(data.size());
  group_->backend().broadcast(cpuTensor(&n, 1), root)->wait();
  data.resize(static_cast<size_t>(n));
  group_->backend().broadcast(cpuTensor(data.data(), data.size()), root)->wait();
}

template <typename T>
std::vector<T> Accelerator::padAcrossProcesses(const std::vector<T>& data, T pad, bool pad_first) {
  size_t longest = 0;
  for (size_t c : lengths(data.size())) longest = std::max(longest, c);
  std::vector<T> out(longest, pad);
  std::copy(data.begin(), data.end(), pad_first ? out.end() - static_cast<long>(data.size()) : out.begin());
  return out;
}

template <typename T>
std::vector<T> Accelerator::splitBetweenProcesses(const std::vector<T>& items, bool apply_padding) const {
  const size_t world = static_cast<size_t>(numProcesses()), rank = static_cast<size_t>(processIndex());
  const size_t base = items.size() / world, extra = items.size() % world;
  const size_t begin = rank * base + std::min(rank, extra), length = base + (rank < extra ? 1 : 0);
  std::vector<T> mine(items.begin() + static_cast<long>(begin), items.begin() + static_cast<long>(begin + length));
  if (apply_padding && extra != 0 && length == base && !items.empty()) {
    mine.push_back(mine.empty() ? items.back() : mine.back());
  }
  return mine;
}

}  // namespace accel
