// SPDX-License-Identifier: Apache-2.0
// Built with CUDA: which of this machine's visible devices can read each other's memory directly
// (cudaDeviceCanAccessPeer), the path NCCL takes between them when it can.
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "apps/bench/bench.h"

namespace accel::bench {

std::string peerAccessMatrix() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return "skipped: no CUDA device visible";
  if (devices == 1) return "skipped: one CUDA device on this machine";
  std::string text;
  for (int i = 0; i < devices; ++i) {
    std::string row = fmt::format("GPU{} ->", i);
    for (int j = 0; j < devices; ++j) {
      if (i == j) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess) can = 0;
      row += fmt::format(" GPU{} {}", j, can ? "yes" : "no");
    }
    text += (text.empty() ? "" : "\n") + row;
  }
  return text;
}

}  // namespace accel::bench
