// SPDX-License-Identifier: Apache-2.0
// The output side of one machine's workers in a round: their stdout/stderr (pipes or
// pseudo-terminals), read into the OutputStreams (console prefix, --log_dir files, the stderr
// tail of a failure summary), and the per-worker log files. Owned by the supervisor's single
// thread, like the workers.
#pragma once

#include <poll.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/worker_process.h"

namespace accel {

// The worker's two OutputStreams for round `attempt`: lines prefixed "[rank N] " (or
// "[host:rank N] ", or the expansion of --log_line_prefix_template), to `console` where --tee /
// console ranks let them through, to stdout.log / stderr.log in the worker's folder of this round
// under plan.log_run_dir (log_layout.h), stderr keeping its last 20 lines for a failure summary.
// Returns how its streams connect: a pseudo-terminal for each stream shown on the terminal
// (--pty), stdin for the input rank when `input` (the user's terminal is there to type into).
// Throws Error when a log file cannot be made.
WorkerIo openWorkerStreams(WorkerProcess& w, const LaunchPlan& plan, int attempt, Console& console, bool input);

bool anyPipeOpen(const std::vector<WorkerProcess>& workers);

// Appends a POLLIN entry for every pipe still open.
void addPipeFds(const std::vector<WorkerProcess>& workers, std::vector<pollfd>& fds);

// One read from `fd` (a worker's pipe, found by its number) into its stream; at end of file or
// on an error the stream is finished and the pipe closed.
void drainPipe(std::vector<WorkerProcess>& workers, int fd);

// What the streams have due without new bytes (output_router.h), and when they next will.
void tickStreams(std::vector<WorkerProcess>& workers, std::chrono::steady_clock::time_point now);
std::optional<std::chrono::steady_clock::time_point> streamsDeadline(const std::vector<WorkerProcess>& workers);

// Tells every worker pseudo-terminal the console's new size, and the workers SIGWINCH.
void resizeTerminals(const std::vector<WorkerProcess>& workers, const Console& console);

// The pseudo-terminal that takes the user's input, or -1.
int inputFd(const std::vector<WorkerProcess>& workers);

// Closes, unread, the pipes still open (held by processes outside the job); returns the workers
// whose pipes those were.
std::vector<const WorkerProcess*> closeOpenPipes(std::vector<WorkerProcess>& workers);

}  // namespace accel
