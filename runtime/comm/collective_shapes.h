// SPDX-License-Identifier: Apache-2.0
// The buffer-size contract of Backend's collectives (backend.h), checked the same way by every
// backend before anything runs: a wrong size is a CommError naming the operation and the sizes,
// never an out-of-bounds read or write. And the one-line description Work carries. Pure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/comm/types.h"

namespace accel {

class Work;

// A CPU backend's check that `t` is in CPU memory ("the Gloo backend", "shared-memory collectives").
void checkCpuMemory(const Tensor& t, const char* op, const char* backend);

// A collective with nothing to exchange (a world of one, or no elements): `bytes` of `from`
// copied to `to` unless they are the same memory; returns a finished Work.
std::shared_ptr<Work> copiedLocally(const Tensor& from, const Tensor& to, size_t bytes, const std::string& description);

void checkAllGather(const Tensor& in, const Tensor& out, int size);
// Returns the total of `counts`.
size_t checkAllGatherV(const Tensor& in, const Tensor& out, const std::vector<size_t>& counts, int size, int rank);
// Where each rank's part starts in an all_gather_v output: the running sum of `counts`.
std::vector<size_t> offsetsOf(const std::vector<size_t>& counts);
void checkReduceScatter(const Tensor& in, const Tensor& out, int size);
// `chunk` is the per-rank element count; on the root, `whole` must hold size * chunk.
void checkRooted(const char* op, const Tensor& whole, size_t chunk, int size, int rank, int root);

}  // namespace accel
