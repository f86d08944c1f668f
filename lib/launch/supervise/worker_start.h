// SPDX-License-Identifier: Apache-2.0
// A round's workers started, all or none: each gets its output streams (worker_output.h), its
// TORCHELASTIC_ERROR_FILE (error_file.h) and the launcher's descriptors it keeps (the progress
// board, the flight recorder's rings); when one cannot be started, those already running are killed (their whole
// process groups) and reaped before the error goes up.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/supervise/error_file.h"
#include "lib/launch/supervise/worker_output.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

// What the running launcher gives every worker of a round besides its plan.
struct RoundStart {
  int attempt = 0;              // the round: names its log folder (attempt_<round>)
  std::string run_dir;          // this launch's folder in --log_dir ("" for none)
  std::string launcher_socket;  // where the launcher answers questions about ranks ("" for none)
  int progress_fd = -1;         // the progress board (progress_board.h), kept across exec
  int flight_fd = -1;           // the flight recorder's rings (flight_board.h), the same
  std::string flight_hook;      // its hook for Python workers (flight_board.h), "" for none
  bool input = false;           // the user's terminal is there to type into
  LogForward forward{};         // where the log files' bytes also go (worker_output.h), if anywhere
};

// Each worker's environment is derived from `plan` here (plan/worker_env.h). Returns a warning
// line when a worker's error file could not be made (it runs without), else "". Throws Error as
// spawnWorker does.
std::string startWorkers(std::vector<WorkerProcess>& workers, const plan::LaunchPlan& plan, const RoundStart& round,
                         console::Console& console, ErrorFiles& error_files);

}  // namespace accel::launch::supervise
