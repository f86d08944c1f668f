// SPDX-License-Identifier: Apache-2.0
// --log_dir in torchrun's layout (its DefaultLogsSpecs): each launch makes a folder of its own in
// DIR, `<run id>_<8 random characters>` as tempfile.mkdtemp names it, and in it one folder per
// round, attempt_<restart count>, holding one folder per local rank with the worker's
// stdout.log, stderr.log and error.json. Two jobs, two machines sharing DIR, or two rounds of one
// job therefore never write to the same file.
#pragma once

#include <string>

#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/supervise/error_file.h"

namespace accel::launch::supervise {

// Makes `log_dir` (and its parents) and in it this launch's folder, a name nobody else holds;
// returns its path. Throws Error naming the path that could not be made.
std::string makeRunLogDir(const std::string& log_dir, const std::string& run_id);

// RUN/attempt_<round>/<local_rank>: the folder of one worker's files in one round (not made here).
std::string rankLogDir(const std::string& run_dir, int round, int local_rank);

// With --enable_each_rank_log: makes its folder; returns the line that says where the logs are.
// Throws Error.
std::string startRankLogs(const plan::LaunchPlan& plan);

// With --log_dir: makes this launch's folder (`run_dir`) and sends the workers' error files there;
// returns the line that says where the logs are. Throws Error.
std::string startRunLogs(const plan::LaunchPlan& plan, ErrorFiles& error_files, std::string& run_dir);

}  // namespace accel::launch::supervise
