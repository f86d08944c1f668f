// SPDX-License-Identifier: Apache-2.0
// The buffer-size contract of Backend's collectives (backend.h), which the front door
// (backend.cc) checks for every transport before anything runs: a wrong size is a CommError
// naming the operation and the sizes, never an out-of-bounds read or write. Pure.
#pragma once

#include <string>
#include <vector>

#include "runtime/comm/types.h"

namespace accel {

void checkAllGather(const Tensor& in, const Tensor& out, int size);
// Returns the total of `counts`.
size_t checkAllGatherV(const Tensor& in, const Tensor& out, const std::vector<size_t>& counts, int size, int rank);
// Where each rank's part starts in an all_gather_v output: the running sum of `counts`.
std::vector<size_t> offsetsOf(const std::vector<size_t>& counts);
void checkReduceScatter(const Tensor& in, const Tensor& out, int size);
// `chunk` is the per-rank element count; on the root, `whole` must hold size * chunk.
void checkRooted(const char* op, const Tensor& whole, size_t chunk, int size, int rank, int root);
// Both hold size() equal chunks.
void checkAllToAll(const Tensor& in, const Tensor& out, int size);
// Every rank named once in each list; `in` holds the sends, `out` the receipts; a rank sends
// itself as many elements as it expects from itself.
void checkAllToAllV(const Tensor& in, const Tensor& out, const std::vector<size_t>& send_counts,
                    const std::vector<size_t>& recv_counts, int size, int rank);

}  // namespace accel
