// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/collective_shapes.h"

#include <cstring>

#include <fmt/format.h>

#include "runtime/comm/work.h"

namespace accel {

void checkCpuMemory(const Tensor& t, const char* op, const char* backend) {
  if (t.device != DeviceType::CPU) {
    throw CommError(fmt::format("{}: the tensor is in CUDA memory; {} work on CPU memory", op, backend),
                    "use the NCCL backend for GPU tensors");
  }
}

std::shared_ptr<Work> copiedLocally(const Tensor& from, const Tensor& to, size_t bytes,
                                    const std::string& description) {
  if (bytes && from.data != to.data) std::memcpy(to.data, from.data, bytes);
  return completedWork(description);
}

void checkAllGather(const Tensor& in, const Tensor& out, int size) {
  if (out.count != in.count * static_cast<size_t>(size)) {
    throw CommError(fmt::format("all_gather: output holds {} elements, expected {} x {}", out.count, size, in.count));
  }
}

size_t checkAllGatherV(const Tensor& in, const Tensor& out, const std::vector<size_t>& counts, int size, int rank) {
  size_t total = 0;
  for (size_t c : counts) total += c;
  if (counts.size() != static_cast<size_t>(size) || counts[static_cast<size_t>(rank)] != in.count ||
      out.count != total) {
    throw CommError("all_gather_v: counts must list every rank's element count and sum to the output size");
  }
  return total;
}

std::vector<size_t> offsetsOf(const std::vector<size_t>& counts) {
  std::vector<size_t> offsets(counts.size(), 0);
  for (size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  return offsets;
}

void checkReduceScatter(const Tensor& in, const Tensor& out, int size) {
  if (in.count != out.count * static_cast<size_t>(size)) {
    throw CommError(
        fmt::format("reduce_scatter: input holds {} elements, expected {} x {}", in.count, size, out.count));
  }
}

void checkRooted(const char* op, const Tensor& whole, size_t chunk, int size, int rank, int root) {
  if (root < 0 || root >= size)
    throw CommError(fmt::format("{}: root {} is not a rank of this group of {}", op, root, size));
  if (rank == root && whole.count != chunk * static_cast<size_t>(size)) {
    throw CommError(
        fmt::format("{}: the root's buffer holds {} elements, expected {} x {}", op, whole.count, size, chunk));
  }
}

}  // namespace accel
