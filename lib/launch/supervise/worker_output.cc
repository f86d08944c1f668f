// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/worker_output.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/launch/console/worker_terminal.h"
#include "lib/launch/settings/line_prefix.h"
#include "lib/launch/supervise/log_layout.h"

namespace accel::launch::supervise {

namespace {

constexpr size_t kSummaryLines = 20;
constexpr int kNarrowest = 20;  // a worker's terminal is never narrower, however long its prefix

// The worker's `name` (stdout.log, stderr.log) in its folder of this round, made here. O_EXCL:
// the folder is new to this launch and round, so a file already there is a mistake, not a log
// to append to.
int openLog(const std::string& run_dir, const plan::WorkerSpec& spec, const char* name, int attempt) {
  if (run_dir.empty()) return -1;
  const std::string dir = rankLogDir(run_dir, attempt, spec.local_rank);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("cannot make the log folder {}: {}", dir, ec.message()));
  const std::string path = dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot open log file {}: {}", path, ::strerror(errno)));
  return fd;
}

// --enable_each_rank_log: the rank's one file for both streams, appended to (a restarted round
// goes on where the last one ended).
int openRankLog(const plan::LaunchPlan& plan, const plan::WorkerSpec& spec) {
  const std::string path = plan.rank_log_prefix + std::to_string(spec.rank) + ".log";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot open log file {}: {}", path, ::strerror(errno)));
  return fd;
}

// "[rank N] " ("[host:rank N] " on several machines), or the template's expansion.
std::string linePrefix(const plan::LaunchPlan& plan, const plan::WorkerSpec& spec) {
  if (!plan.line_prefix_template.empty()) {
    return settings::expandLinePrefix(plan.line_prefix_template, {plan.role, spec.rank, spec.local_rank, plan.host});
  }
  return plan.label_host.empty() ? fmt::format("[{}] ", workerName(spec))
                                 : fmt::format("[{}:{}] ", plan.label_host, workerName(spec));
}

// The console's fd (1 or 2) for this stream of this worker, or -1 where it is not shown.
int consoleFd(const plan::LaunchPlan& plan, const plan::WorkerSpec& spec, int stream_bit, int fd) {
  if (!plan.console_ranks.empty() && !plan.console_ranks.count(spec.local_rank)) return -1;
  auto it = plan.console_streams_by_rank.find(spec.local_rank);
  int streams = it != plan.console_streams_by_rank.end() ? it->second : plan.console_streams;
  return (streams & stream_bit) ? fd : -1;
}

// A pseudo-terminal's width: what the console leaves beside the prefix.
int ptyColumns(const console::Console& console, const std::string& prefix) {
  return std::max(kNarrowest, console.columns() - static_cast<int>(prefix.size()));
}

bool wantsPty(const plan::LaunchPlan& plan, const console::Console& console, int shown_on) {
  if (shown_on < 0 || plan.pty == settings::Pty::Off) return false;
  return plan.pty == settings::Pty::On || console.onScreen(shown_on);
}

// torchrun's --duplicate_*_filters: the stream's lines shown on the console that match go to the
// round's filtered_<stream>.log too, after torchrun's header ("[default0]:", or the template's).
void copyMatchingLines(console::StreamSetup& setup, const plan::LaunchPlan& plan, const plan::WorkerSpec& spec,
                       const std::string& run_dir, int attempt, int which) {
  if (plan.copy_filters[which].empty() || setup.console_fd < 0) return;
  const std::string path =
      fmt::format("{}/attempt_{}/filtered_{}.log", run_dir, attempt, which == 0 ? "stdout" : "stderr");
  setup.copy_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (setup.copy_fd < 0) throw Error(fmt::format("cannot open {}: {}", path, ::strerror(errno)));
  setup.copy_filters = plan.copy_filters[which];
  setup.copy_header =
      plan.line_prefix_template.empty() ? fmt::format("[{}{}]:", plan.role, spec.local_rank) : linePrefix(plan, spec);
}

}  // namespace

WorkerIo openWorkerStreams(WorkerProcess& w, const plan::LaunchPlan& plan, const std::string& run_dir, int attempt,
                           console::Console& console, bool input, const LogForward& forward) {
  const plan::WorkerSpec& spec = *w.spec;
  const std::string prefix = linePrefix(plan, spec);
  console::StreamSetup setup;
  setup.prefix = prefix;
  setup.console = &console;
  // torch's own copy of the rank (distributed_c10d's excepthook); mpirun's output mixes ranks.
  setup.duplicate = spec.label.empty() ? fmt::format("[rank{}]: ", spec.rank) : "";
  setup.progress_interval = std::chrono::milliseconds(static_cast<long long>(plan.progress_interval * 1000));
  console::StreamSetup err = setup;
  setup.console_fd = consoleFd(plan, spec, 1, 1);
  setup.key = 2 * spec.local_rank;
  const bool one_file = !plan.rank_log_prefix.empty();
  const int out_log = one_file ? openRankLog(plan, spec) : openLog(run_dir, spec, "stdout.log", attempt);
  setup.log_fd = out_log;
  err.console_fd = consoleFd(plan, spec, 2, 2);
  err.key = 2 * spec.local_rank + 1;
  err.keep_lines = kSummaryLines;
  setup.keep_lines = kSummaryLines;  // `accel top` shows a rank's last lines of both
  WorkerIo io;
  io.out_pty = wantsPty(plan, console, setup.console_fd);
  io.err_pty = wantsPty(plan, console, err.console_fd);
  // Both shown on one terminal and neither written to a file: one pseudo-terminal keeps their order.
  io.one_pty = io.out_pty && io.err_pty && setup.log_fd < 0 && console.onScreen(1) && console.onScreen(2);
  io.input = input && io.out_pty && spec.label.empty() && spec.rank == plan.stdin_rank;
  io.columns = ptyColumns(console, prefix);
  io.rows = console.rows();
  if (!run_dir.empty()) {
    copyMatchingLines(setup, plan, spec, run_dir, attempt, 0);
    copyMatchingLines(err, plan, spec, run_dir, attempt, 1);
    if (forward) {
      const int local = spec.local_rank;
      setup.forward = [forward, local](std::string_view bytes) { forward(local, 1, bytes); };
      err.forward = [forward, local](std::string_view bytes) { forward(local, 2, bytes); };
    }
  }
  w.out = std::make_unique<console::OutputStream>(std::move(setup));
  try {
    err.log_fd = one_file ? ::fcntl(out_log, F_DUPFD_CLOEXEC, 0) : openLog(run_dir, spec, "stderr.log", attempt);
    if (err.log_fd < 0 && one_file) throw Error(fmt::format("cannot duplicate a log file: {}", ::strerror(errno)));
  } catch (...) {
    w.out.reset();
    throw;
  }
  w.err = std::make_unique<console::OutputStream>(std::move(err));
  return io;
}

bool anyPipeOpen(const std::vector<WorkerProcess>& workers) {
  for (const auto& w : workers) {
    if (w.out_fd >= 0 || w.err_fd >= 0) return true;
  }
  return false;
}

static void addPipeFds(const std::vector<WorkerProcess>& workers, std::vector<pollfd>& fds) {
  for (const auto& w : workers) {
    if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0});
    if (w.err_fd >= 0) fds.push_back({w.err_fd, POLLIN, 0});
  }
}

static void closePipe(WorkerProcess& w, int& fd) {
  (&fd == &w.out_fd ? w.out : w.err)->finish();
  ::close(fd);
  fd = -1;
}

// One read of `fd` (one of `w`'s): true when it gave bytes.
static bool readOnce(WorkerProcess& w, int& fd) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0) {
    (&fd == &w.out_fd ? *w.out : *w.err).feed(buffer, static_cast<size_t>(n), std::chrono::steady_clock::now());
    return true;
  }
  if (n == 0 || (errno != EAGAIN && errno != EINTR)) closePipe(w, fd);
  return false;
}

static bool drainPipe(std::vector<WorkerProcess>& workers, int fd) {
  for (auto& w : workers) {
    if (fd == w.out_fd) return readOnce(w, w.out_fd);
    if (fd == w.err_fd) return readOnce(w, w.err_fd);
  }
  return false;
}

void readWhatIsThere(WorkerProcess& w) {
  constexpr int kMaxReads = 64;  // 4 MiB a stream: its last lines are what matters
  for (int* fd : {&w.out_fd, &w.err_fd}) {
    for (int i = 0; i < kMaxReads && *fd >= 0 && readOnce(w, *fd); ++i) {
    }
  }
}

static void tickStreams(std::vector<WorkerProcess>& workers, std::chrono::steady_clock::time_point now) {
  for (auto& w : workers) {
    for (auto* stream : {w.out.get(), w.err.get()}) {
      if (stream) stream->tick(now);
    }
  }
}

static std::optional<std::chrono::steady_clock::time_point> streamsDeadline(const std::vector<WorkerProcess>& workers) {
  std::optional<std::chrono::steady_clock::time_point> soonest;
  for (const auto& w : workers) {
    for (const auto* stream : {w.out.get(), w.err.get()}) {
      const auto at = stream ? stream->deadline() : std::nullopt;
      if (at && (!soonest || *at < *soonest)) soonest = at;
    }
  }
  return soonest;
}

void resizeTerminals(const std::vector<WorkerProcess>& workers, const console::Console& console) {
  for (const auto& w : workers) {
    if (!w.running || !w.out) continue;
    const int columns = ptyColumns(console, w.out->prefix());
    if (w.out_pty && w.out_fd >= 0) console::setPtySize(w.out_fd, columns, console.rows());
    if (w.err_pty && w.err_fd >= 0) console::setPtySize(w.err_fd, columns, console.rows());
    // A worker's pseudo-terminal is not its controlling terminal: the kernel would not tell it.
    if ((w.out_pty && w.out_fd >= 0) || (w.err_pty && w.err_fd >= 0)) signalGroup(w, SIGWINCH);
  }
}

static int inputFd(const std::vector<WorkerProcess>& workers) {
  for (const auto& w : workers) {
    if (w.takes_input && w.out_fd >= 0) return w.out_fd;
  }
  return -1;
}

std::vector<const WorkerProcess*> closeOpenPipes(std::vector<WorkerProcess>& workers) {
  std::vector<const WorkerProcess*> closed;
  for (auto& w : workers) {
    if (w.out_fd < 0 && w.err_fd < 0) continue;
    closed.push_back(&w);
    for (int* fd : {&w.out_fd, &w.err_fd}) {
      if (*fd >= 0) closePipe(w, *fd);
    }
  }
  return closed;
}

void addOutputFds(const std::vector<WorkerProcess>& workers, console::TerminalInput& input, std::vector<pollfd>& fds) {
  if (inputFd(workers) < 0) {
    input.release();  // no rank takes it (any more): the terminal echoes and edits as before
  } else if (input.claim()) {
    fds.push_back({input.fd(), POLLIN, 0});
  }
  addPipeFds(workers, fds);
}

bool serviceOutput(std::vector<WorkerProcess>& workers, const std::vector<pollfd>& fds, console::TerminalInput& input,
                   console::Console& console) {
  const int target = inputFd(workers);
  bool wrote = false;
  for (const auto& p : fds) {
    if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (target >= 0 && p.fd == input.fd()) {
      input.forward(target);
    } else {
      wrote = drainPipe(workers, p.fd) || wrote;
    }
  }
  const auto now = std::chrono::steady_clock::now();
  tickStreams(workers, now);
  console.flush(now);
  return wrote;
}

int outputTimeoutMs(const std::vector<WorkerProcess>& workers, const console::Console& console) {
  auto at = streamsDeadline(workers);
  if (auto screen = console.deadline(); screen && (!at || *screen < *at)) at = screen;
  if (!at) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*at - std::chrono::steady_clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

}  // namespace accel::launch::supervise
