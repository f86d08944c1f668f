// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/worker_start.h"

#include <signal.h>
#include <sys/wait.h>

#include "lib/launch/worker_output.h"

namespace accel {

std::string startWorkers(std::vector<WorkerProcess>& workers, const LaunchPlan& plan, int attempt, Console& console,
                         bool input, ErrorFiles& error_files, int inherit) {
  try {
    for (size_t i = 0; i < workers.size(); ++i) {
      WorkerProcess& w = workers[i];
      w.spec = &plan.workers[i];
      WorkerIo io = openWorkerStreams(w, plan, attempt, console, input);
      io.inherit = inherit;
      // mpirun runs every rank as one process here: no single file to give it.
      w.error_file = w.spec->label.empty() ? error_files.pathFor(attempt, w.spec->local_rank) : "";
      spawnWorker(w, attempt, io);
    }
  } catch (...) {
    for (auto& w : workers) {
      if (!w.running) continue;
      signalGroup(w, SIGKILL);
      ::waitpid(w.pid, nullptr, 0);
      w.running = false;
    }
    throw;
  }
  const std::string problem = error_files.takeProblem();
  return problem.empty() ? "" : "warning: " + problem + "; a failure summary cannot show a worker's @record exception";
}

}  // namespace accel
