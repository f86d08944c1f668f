// SPDX-License-Identifier: Apache-2.0
// The output side of one machine's workers in a round: their stdout/stderr pipes, read into the
// OutputStreams (console prefix, --log_dir files, the stderr tail of a failure summary), and the
// per-worker log files. Owned by the supervisor's single thread, like the workers.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "lib/launch/worker_process.h"

namespace accel {

// The worker's two OutputStreams for round `attempt`: lines prefixed "[rank N] " (or
// "[host:rank N] ", or the expansion of --log_line_prefix_template), to the console where --tee /
// console ranks let them through, to stdout.log / stderr.log in the worker's folder of this round
// under plan.log_run_dir (log_layout.h), stderr keeping its last 20 lines for a failure summary.
// Throws Error when a log file cannot be made.
void openWorkerStreams(WorkerProcess& w, const LaunchPlan& plan, int attempt);

bool anyPipeOpen(const std::vector<WorkerProcess>& workers);

// Appends a POLLIN entry for every pipe still open.
void addPipeFds(const std::vector<WorkerProcess>& workers, std::vector<pollfd>& fds);

// One read from `fd` (a worker's pipe, found by its number) into its stream; at end of file or
// on an error the stream is finished and the pipe closed.
void drainPipe(std::vector<WorkerProcess>& workers, int fd);

// Closes, unread, the pipes still open (held by processes outside the job); returns the workers
// whose pipes those were.
std::vector<const WorkerProcess*> closeOpenPipes(std::vector<WorkerProcess>& workers);

}  // namespace accel
