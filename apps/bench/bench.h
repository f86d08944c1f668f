// SPDX-License-Identifier: Apache-2.0
// accel-bench: collective and store benchmarks, run under `accel launch`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/comm/backend.h"

namespace accel {
class Accelerator;
}

namespace accel::bench {

struct Args {
  std::string mode = "collectives";  // or "store", "amp", "flight"
  std::string backend = "auto";      // auto | shm | gloo | nccl
  std::string op = "all_reduce";     // all_reduce | broadcast | all_gather | reduce_scatter | barrier
  DataType dtype = DataType::F32;
  std::vector<size_t> sizes;  // bytes
  int iters = 0;              // 0: by size, as the Gloo anchor does
  bool json = false;
  int store_ranks = 8;           // store mode: clients
  int store_ops = 2000;          // store mode: set+get pairs per client
  bool store_processes = false;  // store mode: processes instead of threads
};

int runCollectives(const Args& args, Accelerator& acc, Backend& backend);
int runStore(const Args& args);
int runAmp(const Args& args);
// What the flight recorder adds to one collective (bench_flight.cc).
int runFlight(const Args& args);
// `accel test`'s checks on every rank (preflight.cc); 1 when one failed.
int runPreflight(Accelerator& acc);
// This machine's CUDA peer-to-peer access, one line per device ("GPU0 -> GPU1 yes, GPU2 no"), or
// one line "skipped: WHY" without CUDA devices.
std::string peerAccessMatrix();

// One amp benchmark row: `bytes` read + written by one call of `run`.
struct AmpRow {
  const char* name;
  double bytes;
  std::function<void()> run;
};
// Prints each row's GB/s (from `seconds`, the median time of one run) beside the first row's.
void reportAmp(const Args& args, const std::vector<AmpRow>& rows, const std::function<double(const AmpRow&)>& seconds);
// The same kernels on the first CUDA device beside cudaMemcpy device-to-device (builds with CUDA
// kernels); prints why it skipped otherwise.
void runAmpDevice(const Args& args, size_t floats);

}  // namespace accel::bench
