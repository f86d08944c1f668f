// SPDX-License-Identifier: Apache-2.0
// --log_dir in torchrun's layout (its DefaultLogsSpecs): each launch makes a folder of its own in
// DIR, `<run id>_<8 random characters>` as tempfile.mkdtemp names it, and in it one folder per
// round, attempt_<restart count>, holding one folder per local rank with the worker's
// stdout.log, stderr.log and error.json. Two jobs, two machines sharing DIR, or two rounds of one
// job therefore never write to the same file.
#pragma once

#include <string>

#include "lib/launch/error_file.h"
#include "lib/launch/launch_plan.h"

namespace accel {

// Throws UsageError when `log_dir` exists and is not a directory (a usage error found before
// any worker starts, not a failure to open a file once they run).
void checkLogDir(const std::string& log_dir);

// Makes `log_dir` (and its parents) and in it this launch's folder, a name nobody else holds;
// returns its path. Throws Error naming the path that could not be made.
std::string makeRunLogDir(const std::string& log_dir, const std::string& run_id);

// RUN/attempt_<round>/<local_rank>: the folder of one worker's files in one round (not made here).
std::string rankLogDir(const std::string& run_dir, int round, int local_rank);

// With --log_dir: makes this launch's folder, sets plan.log_run_dir and sends the workers' error
// files there; returns the line that says where the logs are. Throws Error.
std::string startRunLogs(LaunchPlan& plan, ErrorFiles& error_files);

}  // namespace accel
