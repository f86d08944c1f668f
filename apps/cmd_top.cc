// SPDX-License-Identifier: Apache-2.0
// `accel top [JOB]`: a running job seen live, from any of its machines (the job found as `accel
// stacks` finds it: a launcher's pid, a run id, or the only one). Its launcher is asked "status"
// on its socket (lib/launch/supervise/rank_questions.h) once a second; machine 0's launcher
// answers for every machine (another machine's relays the question). On a terminal: a full
// screen (apps/top_terminal.h) redrawn as views come, with keys; off a terminal, or with --once,
// one frame as text; --json one JSON object; both from two views a second apart, so that rates
// are known. --events follows the job's event log (events.jsonl) until the job ends.
// Exit 0, 1 when the launcher does not answer, 2 when no job (or no single job) is named, 130 on
// Ctrl-C.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "apps/commands.h"
#include "apps/top_terminal.h"
#include "lib/common/error.h"
#include "lib/common/process/process_state.h"
#include "lib/common/socket.h"
#include "lib/common/variables.h"
#include "lib/launch/stacks/running_jobs.h"
#include "lib/launch/watch/top_frame.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kEvery = std::chrono::seconds(1);
constexpr auto kPatience = std::chrono::seconds(12);     // the launcher's own is 10 s
constexpr auto kLivePatience = std::chrono::seconds(3);  // on the screen: the last view stays meanwhile

double seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// The launcher's answer to "status", or nullopt with `why`.
std::optional<launch::watch::JobView> askStatus(const launch::stacks::RunningJob& job, std::string& why,
                                                Clock::duration patience = kPatience) {
  if (job.socket.empty()) return why = "its workers name no launcher socket", std::nullopt;
  const auto deadline = Clock::now() + patience;
  std::string error;
  const int fd = net::connectUnix(job.socket, deadline, error);
  if (fd < 0) return why = fmt::format("cannot reach it at {}: {}", job.socket, error), std::nullopt;
  const std::string answer =
      ::send(fd, "status\n", 7, MSG_NOSIGNAL) == 7 ? net::readUntilClosed(fd, deadline) : std::string();
  ::close(fd);
  try {
    return launch::watch::jobViewFromJson(answer.substr(0, answer.find('\n')));
  } catch (const launch::watch::StatusError& e) {
    why = answer.empty() ? "it gave no answer" : "it answered: " + answer.substr(0, answer.find('\n')).substr(0, 200);
    return std::nullopt;
  }
}

launch::watch::JobView mustAsk(const launch::stacks::RunningJob& job) {
  std::string why;
  auto view = askStatus(job, why);
  if (!view) {
    throw Error(fmt::format("the launcher of run {} (pid {}) gives no status: {}", job.run_id, job.launcher, why),
                "is it still running? `accel stacks` lists what runs");
  }
  return std::move(*view);
}

// Two views a second apart: the rates of one frame.
launch::watch::TopModel sampled(const launch::stacks::RunningJob& job) {
  launch::watch::TopModel model;
  model.update(mustAsk(job), seconds());
  std::this_thread::sleep_for(kEvery);
  model.update(mustAsk(job), seconds());
  return model;
}

int columnsOffTerminal() {
  winsize w{};
  if (::isatty(1) && ::ioctl(1, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const int c = std::atoi(env::kColumns.in(env::processLookup()).c_str()); c >= 40) return c;
  return 120;
}

// The last `n` lines of the events file `path` ("" for none).
std::vector<std::string> lastEvents(const std::string& path, size_t n) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > n) lines.erase(lines.begin());
  }
  return lines;
}

int followEvents(const launch::stacks::RunningJob& job) {
  const launch::watch::JobView view = mustAsk(job);
  const std::string path = view.machines.empty() ? "" : view.machines.front().status.events;
  if (path.empty() || ::access(path.c_str(), R_OK) != 0) {
    throw UsageError(fmt::format("run {} writes no event log that this machine can read{}", job.run_id,
                                 path.empty() ? "" : " (" + path + ")"),
                     "launch it with --log_dir DIR (events.jsonl in its run folder) or --event_log FILE, and run "
                     "`accel top --events` on machine 0");
  }
  std::ifstream in(path);
  std::string line;
  for (;;) {
    while (std::getline(in, line)) std::cout << line << "\n" << std::flush;
    in.clear();
    if (process::processState(job.launcher).gone()) {
      while (std::getline(in, line)) std::cout << line << "\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int live(const launch::stacks::RunningJob& job) {
  TopTerminal terminal;
  launch::watch::TopModel model;
  launch::watch::TopScreen screen;
  bool events = false;
  auto next = Clock::now();
  for (;;) {
    if (Clock::now() >= next) {
      std::string why;
      auto view = askStatus(job, why, kLivePatience);                     // the keys wait no longer than this
      if (!view && process::processState(job.launcher).gone()) return 0;  // the job ended
      if (view) model.update(std::move(*view), seconds());
      next = Clock::now() + kEvery;
    }
    screen.width = terminal.width();
    screen.height = terminal.height();
    const auto& machines = model.view().machines;
    screen.events =
        events && !machines.empty() ? lastEvents(machines.front().status.events, 5) : std::vector<std::string>{};
    terminal.draw(launch::watch::topFrame(model, screen));
    bool resized = false;
    int interrupted = 0;
    const auto key = terminal.wait(net::remainingMs(next), resized, interrupted);
    if (interrupted) return interrupted;  // 130 for Ctrl-C
    using Key = TopTerminal::Key;
    if (key == Key::Quit) return 0;
    if (key == Key::Sort) screen.sort = launch::watch::nextSort(screen.sort);
    if (key == Key::Up) screen.cursor = std::max(0, screen.cursor - 1);
    if (key == Key::Down)
      screen.cursor = std::min(screen.cursor + 1, static_cast<int>(model.rows(screen.sort).size()) - 1);
    if (key == Key::Lines) screen.lines = !screen.lines;
    if (key == Key::Events) events = !events;
  }
}

}  // namespace

int runTop(const std::string& job_selector, const TopOptions& options) {
  ::signal(SIGPIPE, SIG_IGN);  // a launcher that goes away mid-question is an answer, not a death
  const launch::stacks::RunningJob job = launch::stacks::selectJob(launch::stacks::findRunningJobs(), job_selector);
  if (options.events) return followEvents(job);
  if (options.json) {
    std::cout << sampled(job).json().dump() << std::endl;
    return 0;
  }
  if (options.once || !::isatty(0) || !::isatty(1)) {
    launch::watch::TopScreen screen;
    screen.width = columnsOffTerminal();
    screen.height = 1 << 20;
    screen.keys = false;
    for (const auto& line : launch::watch::topFrame(sampled(job), screen)) std::cout << line << "\n";
    std::cout.flush();
    return 0;
  }
  return live(job);
}

}  // namespace accel
