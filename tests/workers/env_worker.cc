// SPDX-License-Identifier: Apache-2.0
// env_worker: the worker program that `accel launch` tests start instead of a training script.
// C++17, standard library + POSIX only. One binary, behaviour chosen by the arguments.
//
// Output (stdout, flushed before anything else happens):
//   env NAME=VALUE   for each variable of kVars (below) that is set, in that order
//   pid PID
//   pgid PGID
//
// Options (all optional, any order; anything else: message on stderr, exit 64):
//   --exit-code N      exit with N at the end (default 0)
//   --fail-rank R      only the worker whose env RANK == R fails (--exit-code / --signal), and
//                      it does so right away (after --fail-after, not --sleep); the others
//                      sleep --sleep seconds and exit 0
//   --fail-after S     (extension) seconds the failing rank waits before failing (default 0)
//   --signal NAME      end by raising NAME (KILL, SEGV, TERM, ..., SIGxxx or a number) on
//                      itself instead of exiting; core dumps are disabled first
//   --sleep S          sleep S seconds (a double) before ending; nanosleep in a loop, so
//                      signals are handled while sleeping
//   --stderr-lines N   write `stderr line K` (K = 1..N) to stderr before ending
//   --partial          write `no newline at end` to stdout, without a newline, before ending
//   --trap-int         on SIGINT: print `got SIGINT` (async-signal-safe write), exit 42
//   --trap-term        on SIGTERM: print `got SIGTERM`, exit 43
//   --ignore-term      ignore SIGTERM (tests the SIGKILL after the grace period)
//   --pidfile PATH     append `PID\n` to PATH (O_APPEND, one write)
//   --fail-when-up P   every rank appends `PID\n` to P.N (N = TORCHELASTIC_RESTART_COUNT, or 0)
//                      once its output is flushed and its handlers are in place; the failing
//                      rank starts its --fail-after wait only when P.N has WORLD_SIZE lines
//                      (at most 120 s), so no test depends on how fast a loaded machine starts
//                      the other workers
//   --spawn-child      fork a grandchild (same process group, default signal handling) that
//                      sleeps --sleep seconds then exits 0; its pid is appended to --pidfile
//   --spawn-daemon H   fork a grandchild that leaves the worker's session and process group
//                      (setsid, as a daemon does) and sleeps 30 s; H `keep`: it keeps stdout
//                      and stderr, `close`: it points them at /dev/null, as a daemon does; its
//                      pid is appended to --pidfile
//   --record-error M   when it fails: write M to $TORCHELASTIC_ERROR_FILE as torch's @record does
//                      (its JSON, with a two-line py_callstack), and `[rankR]: boom M` to
//                      stderr, prefixed as torch's excepthook prefixes tracebacks
//   --lines N          print `line K of rank R xxx...` (K = 1..N, R = env RANK, each line
//                      200 bytes with the newline) to stdout, each with a single write()
//   --report-binding   print `cpus LIST` (its Cpus_allowed_list, from /proc/self/status) and
//                      `mempolicy MODE NODES` (get_mempolicy: MODE 0 default, 1 preferred,
//                      2 bind, 3 interleave, 4 local; NODES the mask's node numbers, or -)
//
// Order of events: parse arguments, install signal handlers, write the pidfile, spawn the
// grandchild (so both pids are in the pidfile once the `pid` line is visible), print the
// variables, then --lines, --stderr-lines, --partial, the sleep, and the end.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

// Grouped by family (kept by hand).
// clang-format off
const char* const kVars[] = {
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
    "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID",
    "TORCHELASTIC_SIGNALS_TO_HANDLE", "TORCHELASTIC_ERROR_FILE",
    "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "ACCELERATE_MIXED_PRECISION", "ACCELERATE_USE_CPU",
    "ACCELERATE_DEBUG_MODE", "ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "ACCELERATE_DYNAMO_BACKEND",
    "ACCELERATE_USE_DEEPSPEED", "ACCELERATE_USE_FSDP", "ACCEL_RUN_ID", "ACCEL_STORE_TOKEN",
    "TORCHELASTIC_USE_AGENT_STORE"};
// clang-format on

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "env_worker: %s\n", why.c_str());
  std::exit(64);
}

long parseInt(const char* opt, const char* s, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
    usage(std::string("bad value for ") + opt + ": '" + s + "'");
  return v;
}

double parseSeconds(const char* opt, const char* s) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !std::isfinite(v) || v < 0)
    usage(std::string("bad value for ") + opt + ": '" + s + "'");
  return v;
}

int parseSignal(const char* s) {
  static const struct {
    const char* name;
    int sig;
  } kSignals[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ILL", SIGILL},   {"TRAP", SIGTRAP},
                  {"ABRT", SIGABRT}, {"BUS", SIGBUS},   {"FPE", SIGFPE},   {"KILL", SIGKILL}, {"USR1", SIGUSR1},
                  {"SEGV", SIGSEGV}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}};
  const char* name = std::strncmp(s, "SIG", 3) == 0 ? s + 3 : s;
  for (const auto& e : kSignals)
    if (std::strcmp(name, e.name) == 0) return e.sig;
  return static_cast<int>(parseInt("--signal", s, 1, 64));
}

void writeAll(int fd, const char* p, size_t n) {  // async-signal-safe
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

extern "C" void onTrappedSignal(int sig) {  // --trap-int / --trap-term
  static const char kInt[] = "got SIGINT\n", kTerm[] = "got SIGTERM\n";
  if (sig == SIGINT)
    writeAll(STDOUT_FILENO, kInt, sizeof kInt - 1);
  else
    writeAll(STDOUT_FILENO, kTerm, sizeof kTerm - 1);
  _exit(sig == SIGINT ? 42 : 43);
}

void setHandler(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

void sleepFor(double seconds) {  // resumes after handled signals until the time is up
  struct timespec req {};
  req.tv_sec = static_cast<time_t>(seconds);
  req.tv_nsec = static_cast<long>((seconds - static_cast<double>(req.tv_sec)) * 1e9);
  struct timespec rem {};
  while (nanosleep(&req, &rem) != 0 && errno == EINTR) req = rem;
}

void appendPid(const char* path, pid_t pid) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) usage(std::string("cannot open pidfile ") + path + ": " + std::strerror(errno));
  std::string line = std::to_string(pid) + "\n";
  writeAll(fd, line.data(), line.size());
  close(fd);
}

// Waits until `path` has `lines` lines; false after 120 s.
bool waitForLines(const std::string& path, long lines) {
  for (int tick = 0; tick < 12000; ++tick) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    long n = 0;
    if (f) {
      for (int c; (c = std::fgetc(f)) != EOF;) n += c == '\n';
      std::fclose(f);
    }
    if (n >= lines) return true;
    sleepFor(0.01);
  }
  return false;
}

// What torch's @record and its process-group excepthook leave behind (no JSON escaping: tests
// pass plain words).
void recordError(const std::string& message, const std::string& rank) {
  if (const char* path = std::getenv("TORCHELASTIC_ERROR_FILE")) {
    if (FILE* f = std::fopen(path, "w")) {
      std::fprintf(f,
                   "{\"message\": {\"message\": \"RuntimeError: %s\", \"extraInfo\": {\"py_callstack\": "
                   "\"Traceback (most recent call last):\\n  File \\\"train.py\\\", line 7, in main\\n"
                   "RuntimeError: %s\\n\", \"timestamp\": \"1\"}}}",
                   message.c_str(), message.c_str());
      std::fclose(f);
    }
  }
  std::fprintf(stderr, "[rank%s]: boom %s\n", rank.c_str(), message.c_str());
  std::fflush(stderr);
}

// Its CPUs and memory policy, as the kernel holds them: what accel's child set-up applied.
void reportBinding() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      const size_t at = line.find_first_not_of(" \t", 18);
      std::printf("cpus %s\n", at == std::string::npos ? "" : line.c_str() + at);
    }
  }
  int mode = -1;
  unsigned long mask[16] = {};
  if (syscall(SYS_get_mempolicy, &mode, mask, 8 * sizeof mask + 1, nullptr, 0UL) != 0) {
    std::printf("mempolicy ? %s\n", std::strerror(errno));
    return;
  }
  std::string nodes;
  for (size_t n = 0; n < 8 * sizeof mask; ++n) {
    if (mask[n / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long))) & 1UL) {
      nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    }
  }
  std::printf("mempolicy %d %s\n", mode, nodes.empty() ? "-" : nodes.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0, signal_to_raise = 0;
  constexpr long kMax = 1L << 30;
  long fail_rank = -1, stderr_lines = 0, lines = 0;  // fail_rank -1: every rank fails
  bool partial = false, spawn_child = false, report_binding = false;
  std::string spawn_daemon;  // "", keep or close
  bool trap_int = false, trap_term = false, ignore_term = false;
  double sleep_s = 0, fail_after_s = 0;
  const char* pidfile = nullptr;
  std::string up_file;  // --fail-when-up, with the round appended
  std::string record_error;

  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(opt + " needs a value");
      return argv[++i];
    };
    if (opt == "--exit-code")
      exit_code = static_cast<int>(parseInt(opt.c_str(), value(), 0, 255));
    else if (opt == "--fail-rank")
      fail_rank = parseInt(opt.c_str(), value(), 0, kMax);
    else if (opt == "--fail-after")
      fail_after_s = parseSeconds(opt.c_str(), value());
    else if (opt == "--signal")
      signal_to_raise = parseSignal(value());
    else if (opt == "--sleep")
      sleep_s = parseSeconds(opt.c_str(), value());
    else if (opt == "--stderr-lines")
      stderr_lines = parseInt(opt.c_str(), value(), 0, kMax);
    else if (opt == "--partial")
      partial = true;
    else if (opt == "--report-binding")
      report_binding = true;
    else if (opt == "--trap-int")
      trap_int = true;
    else if (opt == "--trap-term")
      trap_term = true, ignore_term = false;
    else if (opt == "--ignore-term")
      ignore_term = true, trap_term = false;
    else if (opt == "--pidfile")
      pidfile = value();
    else if (opt == "--fail-when-up")
      up_file = value();
    else if (opt == "--spawn-child")
      spawn_child = true;
    else if (opt == "--spawn-daemon")
      spawn_daemon = value();
    else if (opt == "--record-error")
      record_error = value();
    else if (opt == "--lines")
      lines = parseInt(opt.c_str(), value(), 0, kMax);
    else
      usage("unknown argument '" + opt + "'");
  }

  if (trap_int) setHandler(SIGINT, onTrappedSignal);
  if (trap_term) setHandler(SIGTERM, onTrappedSignal);
  if (ignore_term) setHandler(SIGTERM, SIG_IGN);

  if (pidfile) appendPid(pidfile, getpid());
  if (spawn_child) {
    pid_t child = fork();
    if (child < 0) usage(std::string("fork: ") + std::strerror(errno));
    if (child == 0) {  // grandchild: default signal handling, sleep, exit 0
      setHandler(SIGINT, SIG_DFL);
      setHandler(SIGTERM, SIG_DFL);
      sleepFor(sleep_s);
      _exit(0);
    }
    if (pidfile) appendPid(pidfile, child);
  }
  if (!spawn_daemon.empty()) {
    if (spawn_daemon != "keep" && spawn_daemon != "close") usage("--spawn-daemon takes keep or close");
    pid_t child = fork();
    if (child < 0) usage(std::string("fork: ") + std::strerror(errno));
    if (child == 0) {  // out of the worker's group and session, still holding its output pipes
      setsid();
      if (spawn_daemon == "close") {
        int null_fd = open("/dev/null", O_WRONLY);
        dup2(null_fd, STDOUT_FILENO);
        dup2(null_fd, STDERR_FILENO);
      }
      setHandler(SIGINT, SIG_DFL);
      setHandler(SIGTERM, SIG_DFL);
      sleepFor(30);
      _exit(0);
    }
    if (pidfile) appendPid(pidfile, child);
  }

  for (const char* name : kVars)
    if (const char* v = std::getenv(name)) std::printf("env %s=%s\n", name, v);
  std::printf("pid %ld\npgid %ld\n", static_cast<long>(getpid()), static_cast<long>(getpgrp()));
  if (report_binding) reportBinding();
  std::fflush(stdout);

  const char* rank_env = std::getenv("RANK");
  const std::string rank = rank_env ? rank_env : "?";
  for (long k = 1; k <= lines; ++k) {
    std::string line = "line " + std::to_string(k) + " of rank " + rank + " ";
    if (line.size() < 199) line.append(199 - line.size(), 'x');
    line += '\n';
    writeAll(STDOUT_FILENO, line.data(), line.size());
  }
  for (long k = 1; k <= stderr_lines; ++k) std::fprintf(stderr, "stderr line %ld\n", k);
  std::fflush(stderr);
  if (partial) {
    static const char kPartial[] = "no newline at end";
    writeAll(STDOUT_FILENO, kPartial, sizeof kPartial - 1);
  }

  const bool fails = fail_rank < 0 || (rank_env && rank == std::to_string(fail_rank));
  if (!up_file.empty()) {
    const char* round = std::getenv("TORCHELASTIC_RESTART_COUNT");
    up_file += std::string(".") + (round ? round : "0");
    appendPid(up_file.c_str(), getpid());
    const char* world = std::getenv("WORLD_SIZE");
    if (fails && !waitForLines(up_file, world ? std::atol(world) : 1)) {
      std::fprintf(stderr, "env_worker: not every rank was up after 120 s\n");
    }
  }
  sleepFor(fail_rank >= 0 && fails ? fail_after_s : sleep_s);
  if (!fails) return 0;
  if (!record_error.empty()) recordError(record_error, rank);
  if (signal_to_raise != 0) {
    struct rlimit no_core {};
    setrlimit(RLIMIT_CORE, &no_core);  // no core files from SEGV/ABRT/... in test directories
    setHandler(signal_to_raise, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_to_raise);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(signal_to_raise);
    return 128 + signal_to_raise;  // only if the signal did not end the process
  }
  return exit_code;
}
