// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/launch_report.h"

#include <string.h>

#include <fmt/format.h>

#include "lib/common/process/process_state.h"
#include "lib/common/strings.h"
#include "lib/common/write_fully.h"
#include "lib/launch/console/output_stream.h"
#include "lib/launch/job/job_round.h"
#include "lib/launch/supervise/error_file.h"

namespace accel::launch::supervise {

namespace {
constexpr size_t kTracebackLines = 30;  // a deep stack's last frames are the ones that say why
}  // namespace

void LaunchReport::write(std::string line) const {
  if (!console_) return writeFully(2, line + "\n");
  console_->line(2, line);
  console_->flush(console::Console::Clock::now(), true);
}

void LaunchReport::say(const std::string& line) const {
  write((rounds_ ? fmt::format("accel: [round {}] ", round_) : std::string("accel: ")) + line);
}

void LaunchReport::failure(const std::optional<job::WorkerFailure>& failure, const std::string& consequence,
                           const std::vector<std::string>& stopped) const {
  if (!failure) return;
  const job::WorkerFailure& f = *failure;
  const bool here = f.machine == machine_;
  if (!here && one_console_) {
    say(stopped.empty() ? "no other rank was running" : "stopped ranks " + join(stopped, ", "));
    return showStacks();
  }
  say(fmt::format("error: {}{} {} after {:.2f} s; it failed first{}", several_machines_ ? describeWorker(f) : f.who,
                  here ? fmt::format(" (pid {})", f.pid) : "", f.exit_text, f.seconds,
                  several_machines_ ? " in the job" : ""));
  if (here && !consequence.empty()) say(consequence);
  if (!f.raised.empty()) {  // what torchrun's summary shows: the exception @record wrote down
    say(fmt::format("{} raised {}", f.who, f.raised));
    const size_t from = f.traceback.size() > kTracebackLines ? f.traceback.size() - kTracebackLines : 0;
    if (!f.traceback.empty())
      say(fmt::format("its traceback (from its TORCHELASTIC_ERROR_FILE){}:", from ? ", last lines" : ""));
    for (size_t i = from; i < f.traceback.size(); ++i) write("accel:   | " + f.traceback[i]);
  } else if (f.tail.empty()) {
    say(fmt::format("{} wrote nothing to {}", f.who, f.tail_of));
  } else {
    say(fmt::format("last {} line(s) of {}'s {}:", f.tail.size(), f.who, f.tail_of));
    for (const auto& line : f.tail) write("accel:   | " + line);
  }
  say(stopped.empty() ? "no other rank was running" : "stopped ranks " + join(stopped, ", "));
  showStacks();
}

void LaunchReport::showStacks() const {
  for (const std::string& line : std::exchange(stacks_, {})) say(line);
}

int LaunchReport::end(const job::JobEvent& e, const std::string& consequence,
                      const std::vector<std::string>& stopped) const {
  if (e.signal) {
    say(fmt::format("interrupted by {}; stopped ranks {}", process::signalName(e.signal),
                    stopped.empty() ? "none" : join(stopped, ", ")));
  } else if (!e.message.empty()) {
    say("error: " + e.message);
    if (!e.hint.empty()) say("hint: " + e.hint);
    if (e.failure) {
      failure(e.failure, consequence, stopped);
    } else {
      say(stopped.empty() ? "no rank of this machine was running" : "stopped ranks " + join(stopped, ", "));
    }
  } else if (e.failure) {
    failure(e.failure, consequence, stopped);
  } else if (restarts_ > 0) {  // a job that needed restarts says that it recovered
    say(fmt::format("every worker finished, after {} restart(s)", restarts_));
  } else if (round_ > 0) {
    say(fmt::format("every worker finished, in round {} (the machines changed)", round_));
  }
  showStacks();  // where failure() has not shown them
  return e.exit_code;
}

job::WorkerFailure failureOf(const WorkerProcess& w, const plan::LaunchPlan& plan) {
  job::WorkerFailure f;
  f.machine = plan.machine_rank;
  f.host = plan.host;
  f.rank = w.spec->rank;
  f.who = workerName(*w.spec);
  f.pid = w.pid;
  f.exit_code = w.exitCode();
  f.exit_text = w.describeExit();
  f.seconds = w.exited_at;
  f.killed_from_outside = w.killedFromOutside();
  const console::OutputStream& tail = w.one_pty ? *w.out : *w.err;
  f.tail.assign(tail.lastLines().begin(), tail.lastLines().end());
  if (w.one_pty) f.tail_of = "output";
  if (auto recorded = readErrorFile(w.error_file)) {
    f.raised = recorded->message;
    f.traceback = std::move(recorded->traceback);
  }
  return f;
}

std::vector<std::string> stoppedRanks(const std::vector<WorkerProcess>& workers, const WorkerProcess* except) {
  std::vector<std::string> ranks;
  for (const auto& w : workers) {
    if (w.stopped_by_us && &w != except) ranks.push_back(std::to_string(w.spec->rank));
  }
  return ranks;
}

std::string consequenceLine(const WorkerProcess* consequence) {
  if (!consequence) return "";
  return fmt::format("rank {} {} just before (a SIGKILLed worker's connections close before its exit is seen)",
                     consequence->spec->rank, consequence->describeExit());
}

}  // namespace accel::launch::supervise
