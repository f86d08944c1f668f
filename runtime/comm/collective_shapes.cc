// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/collective_shapes.h"

#include <fmt/format.h>

#include "runtime/comm/work.h"

namespace accel {

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

void checkAllToAll(const Tensor& in, const Tensor& out, int size) {
  const size_t n = static_cast<size_t>(size);
  if (in.count != out.count || in.count % n != 0) {
    throw CommError(
        fmt::format("all_to_all: input and output must hold the same number of elements, a multiple of "
                    "the group's {} ranks; they hold {} and {}",
                    size, in.count, out.count));
  }
}

void checkAllToAllV(const Tensor& in, const Tensor& out, const std::vector<size_t>& send_counts,
                    const std::vector<size_t>& recv_counts, int size, int rank) {
  const size_t n = static_cast<size_t>(size);
  if (send_counts.size() != n || recv_counts.size() != n) {
    throw CommError(
        fmt::format("all_to_all_v: {} send counts and {} receive counts for a group of {}; list one of "
                    "each for every rank",
                    send_counts.size(), recv_counts.size(), size));
  }
  size_t sent = 0, received = 0;
  for (size_t c : send_counts) sent += c;
  for (size_t c : recv_counts) received += c;
  if (sent != in.count || received != out.count) {
    throw CommError(
        fmt::format("all_to_all_v: the send counts add up to {} and the receive counts to {}, but input "
                    "holds {} elements and output {}",
                    sent, received, in.count, out.count));
  }
  const size_t me = static_cast<size_t>(rank);
  if (send_counts[me] != recv_counts[me]) {
    throw CommError(fmt::format("all_to_all_v: rank {} sends itself {} elements but expects {} from itself", rank,
                                send_counts[me], recv_counts[me]));
  }
}

}  // namespace accel
