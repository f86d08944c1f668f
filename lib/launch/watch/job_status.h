// SPDX-License-Identifier: Apache-2.0
// What a launcher knows of its part of a running job at one moment: the job (round, restarts,
// world), and each of this machine's ranks (state, exit, output, collectives, CPU and memory).
// Plain data, made by the supervisor (supervise/machine_status.h) and read by /metrics
// (metrics_text.h). Nothing secret is here: no token, no command line, no environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel::launch::watch {

struct RankStatus {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  bool running = false;
  std::optional<int> exit_code;  // once exited: the code, or 128 + signal
  bool stopped_by_launcher = false;
  double output_age = -1;  // seconds since it last wrote; -1 before it wrote
  uint64_t stdout_bytes = 0, stderr_bytes = 0;
  uint64_t frames = 0;       // progress-bar frames it drew
  uint64_t collectives = 0;  // collectives finished (libaccel_runtime's progress board)
  double cpu_seconds = 0;    // user + system, its process
  uint64_t resident_bytes = 0;
  std::string progress;            // its newest progress-bar frame ("" for none)
  std::string collective;          // the collective it is in now ("" for none)
  double collective_seconds = 0;   // since it called it
  std::vector<std::string> lines;  // its last lines (stdout's, then stderr's)
  int gpu = -1;                    // the GPU (NVML's index) its process holds memory on; -1: none seen
  int gpu_percent = -1;            // that GPU's utilisation; -1: unknown
  uint64_t gpu_bytes = 0;          // the memory its process holds there
};

struct MachineStatus {
  std::string job;   // the run id
  std::string host;  // this machine's
  std::string role;
  std::string version;  // accel's
  int machine = 0;
  bool decides = false;  // machine 0 (or the only one): the job's own series are its
  int round = 0;
  int restarts = 0;
  int max_restarts = 0;
  int world_size = 1;
  int machines = 1;
  double started = 0;        // seconds since the epoch
  double round_seconds = 0;  // since this round started
  std::string events;        // where this machine's events go (a file; "" for none): `accel top --events`
  std::vector<RankStatus> ranks;
  // Once the job ended (--metrics_linger serves these).
  bool ended = false;
  int exit_code = 0;
  std::string verdict;  // succeeded, failed, interrupted, hung, ended
};

}  // namespace accel::launch::watch
