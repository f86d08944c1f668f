// SPDX-License-Identifier: Apache-2.0
// The output side of one machine's workers in a round: their stdout/stderr (pipes or
// pseudo-terminals), read into the OutputStreams (console prefix, --log_dir files, the stderr
// tail of a failure summary), and the per-worker log files. Owned by the supervisor's single
// thread, like the workers.
#pragma once

#include <poll.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/console/terminal_input.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

// The worker's two OutputStreams for round `attempt`: lines prefixed "[rank N] " (or
// "[host:rank N] ", or the expansion of --log_line_prefix_template), to `console` where --tee /
// console ranks let them through, to stdout.log / stderr.log in the worker's folder of this round
// under `run_dir` (log_layout.h; "" for none), stderr keeping its last 20 lines for a failure summary.
// Returns how its streams connect: a pseudo-terminal for each stream shown on the terminal
// (--pty), stdin for the input rank when `input` (the user's terminal is there to type into).
// Throws Error when a log file cannot be made.
// With --log_dir, torchrun's --duplicate_*_filters copy the shown streams' matching lines to the
// round's filtered_stdout.log / filtered_stderr.log, and `forward` (when set) is given every byte
// the log files get: stream 1 stdout, 2 stderr.
using LogForward = std::function<void(int local_rank, int stream, std::string_view bytes)>;
WorkerIo openWorkerStreams(WorkerProcess& w, const plan::LaunchPlan& plan, const std::string& run_dir, int attempt,
                           console::Console& console, bool input, const LogForward& forward = {});

bool anyPipeOpen(const std::vector<WorkerProcess>& workers);

// The output's share of one turn of the supervisor's poll loop: the terminal's input while it
// goes to a rank (terminal_input.h), and every pipe still open.
void addOutputFds(const std::vector<WorkerProcess>& workers, console::TerminalInput& input, std::vector<pollfd>& fds);
// After poll (`fds` the whole array): reads what the pipes hold, passes the user's typing on,
// then writes what is due (open lines, thinned frames, live lines) and flushes the console.
// Returns whether a worker wrote something (progress, for --hang_timeout).
bool serviceOutput(std::vector<WorkerProcess>& workers, const std::vector<pollfd>& fds, console::TerminalInput& input,
                   console::Console& console);
// Reads what `w`'s pipes hold now (at most a few MiB), without waiting: a worker that just exited
// has its last words read before its failure is reported.
void readWhatIsThere(WorkerProcess& w);
// Milliseconds until the console or a stream has something due without new bytes; -1: nothing.
int outputTimeoutMs(const std::vector<WorkerProcess>& workers, const console::Console& console);

// Tells every worker pseudo-terminal the console's new size, and the workers SIGWINCH.
void resizeTerminals(const std::vector<WorkerProcess>& workers, const console::Console& console);

// Closes, unread, the pipes still open (held by processes outside the job); returns the workers
// whose pipes those were.
std::vector<const WorkerProcess*> closeOpenPipes(std::vector<WorkerProcess>& workers);

}  // namespace accel::launch::supervise
