// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/worker_start.h"

#include <signal.h>
#include <sys/wait.h>

#include "lib/launch/plan/worker_env.h"
#include "lib/launch/supervise/worker_output.h"

namespace accel::launch::supervise {

std::string startWorkers(std::vector<WorkerProcess>& workers, const plan::LaunchPlan& plan, const RoundStart& round,
                         console::Console& console, ErrorFiles& error_files) {
  try {
    for (size_t i = 0; i < workers.size(); ++i) {
      WorkerProcess& w = workers[i];
      w.spec = &plan.workers[i];
      WorkerIo io = openWorkerStreams(w, plan, round.run_dir, round.attempt, console, round.input, round.forward);
      // mpirun runs every rank as one process here: no single file nor board slot to give it.
      const bool one_rank = w.spec->label.empty();
      if (one_rank) io.inherit = {round.progress_fd, round.flight_fd};
      w.error_file = one_rank ? error_files.pathFor(round.attempt, w.spec->local_rank) : "";
      const plan::SpawnContext context{w.error_file, round.launcher_socket, one_rank ? round.progress_fd : -1,
                                       one_rank ? round.flight_fd : -1, one_rank ? round.flight_hook : ""};
      spawnWorker(w, plan::workerEnvironment(plan, *w.spec, context), plan.unset, io);
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

}  // namespace accel::launch::supervise
