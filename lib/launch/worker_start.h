// SPDX-License-Identifier: Apache-2.0
// A round's workers started, all or none: each gets its output streams (worker_output.h), its
// TORCHELASTIC_ERROR_FILE (error_file.h) and the launcher's descriptor it keeps (the progress
// board); when one cannot be started, those already running are killed (their whole process
// groups) and reaped before the error goes up.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/error_file.h"
#include "lib/launch/worker_process.h"

namespace accel {

// `input`: the user's terminal is there to type into. Returns a warning line when a worker's
// error file could not be made (it runs without), else "". Throws Error as spawnWorker does.
std::string startWorkers(std::vector<WorkerProcess>& workers, const LaunchPlan& plan, int attempt, Console& console,
                         bool input, ErrorFiles& error_files, int inherit);

}  // namespace accel
