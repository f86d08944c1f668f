// SPDX-License-Identifier: Apache-2.0
#include "tests/support/process.h"

#include "lib/launch/facts/port.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace accel::test {

namespace {

void setEnvironment(const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) {
    if (v.empty()) {
      ::unsetenv(k.c_str());
    } else {
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
}

// In the forked child: wire up stdin/stdout/stderr, apply `env`, exec (exit 127 on failure).
[[noreturn]] void execChild(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, int in,
                            int out, int err) {
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  setEnvironment(env);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  _exit(127);
}

}  // namespace

int freeLoopbackPort() { return accel::launch::facts::pickFreePort(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::map<std::string, std::string> rankEnv(int rank, int world, const std::string& port, const std::string& token,
                                           std::map<std::string, std::string> extra, int per_machine) {
  const int local = per_machine > 0 ? per_machine : world;
  extra.emplace("RANK", std::to_string(rank));
  extra.emplace("WORLD_SIZE", std::to_string(world));
  extra.emplace("LOCAL_RANK", std::to_string(rank % local));
  extra.emplace("LOCAL_WORLD_SIZE", std::to_string(local));
  extra.emplace("MASTER_ADDR", "127.0.0.1");
  extra.emplace("MASTER_PORT", port);
  extra.emplace("ACCEL_STORE_TOKEN", token);
  extra.emplace("GLOO_SOCKET_IFNAME", "lo");
  return extra;
}

std::map<std::string, std::string> hermeticEnv(const TempDir& dir, std::map<std::string, std::string> extra) {
  extra.emplace("HF_HOME", dir.file("hf"));
  extra.emplace("ACCEL_NVML_LIBRARY", dir.file("none.so"));
  extra.emplace("ACCEL_CUDA_LIBRARY", dir.file("none.so"));
  extra.emplace("SLURM_JOB_ID", "");
  extra.emplace("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "");  // the tests' prefix is "[rank N] "
  extra.emplace("TMPDIR", dir.path());  // what a launch keeps there (stacks before a stop) goes with the test
  return extra;
}

std::map<std::string, std::string> trainerEnv(const TempDir& dir) {
  return hermeticEnv(dir, {{"GLOO_SOCKET_IFNAME", "lo"}, {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS", ""}});
}

RunResult run(const std::vector<std::string>& argv, const std::string& input,
              const std::map<std::string, std::string>& env, int timeout_ms) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) {
    throw std::runtime_error("pipe failed");
  }
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) execChild(argv, env, in[0], out[1], err[1]);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::signal(SIGPIPE, SIG_IGN);
  size_t written = 0;
  if (input.empty()) {
    ::close(in[1]);
    in[1] = -1;
  }
  RunResult result;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[3] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}, {in[1], POLLOUT, 0}};
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0 || ::poll(fds, 3, left) == 0) {
      ::kill(pid, SIGKILL);
      result.err += "\n[test harness: timed out]";
      break;
    }
    char buffer[4096];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      }
    }
    if (in[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = ::write(in[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == input.size()) {
        ::close(in[1]);
        in[1] = -1;
      }
    }
  }
  if (in[1] >= 0) ::close(in[1]);
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));  // never kill(-1)
  if (pid_ == 0) execChild(argv, env, ::open("/dev/null", O_RDONLY), out[1], err[1]);
  ::close(out[1]);
  ::close(err[1]);
  out_ = out[0];
  err_ = err[0];
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
  if (err_ >= 0) ::close(err_);
}

bool BackgroundProcess::pump(int timeout_ms) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
  if (out_ < 0 && err_ < 0) return false;
  if (::poll(fds, 2, timeout_ms) <= 0) return false;
  char buffer[4096];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
    ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
    if (n <= 0) {
      ::close(fds[i].fd);
      (i == 0 ? out_ : err_) = -1;
    } else {
      (i == 0 ? result_.out : result_.err).append(buffer, static_cast<size_t>(n));
    }
  }
  return true;
}

bool BackgroundProcess::waitForOutput(const std::string& text, int times, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    std::string all = output();
    int found = 0;
    for (size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++found;
    if (found >= times) return true;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !pump(static_cast<int>(left))) return false;
  }
}

void BackgroundProcess::signal(int sig) { ::kill(pid_, sig); }

RunResult BackgroundProcess::wait(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out_ >= 0 || err_ >= 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pump(static_cast<int>(left));
  }
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      result_.exit_code = -1;
      return result_;
    }
    ::usleep(5000);
  }
  pid_ = -1;
  result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result_;
}

bool processAlive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

unsigned long long procSignals(pid_t pid, const std::string& field) {
  const std::string status = slurp("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find(field + ":");
  if (at == std::string::npos) return ~0ULL;
  return std::stoull(status.substr(at + field.size() + 1, status.find('\n', at) - at - field.size() - 1), nullptr, 16);
}

bool waitUntil(const std::function<bool()>& condition, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    ::poll(nullptr, 0, 10);
  }
}

namespace {
std::filesystem::path testBinDir() {
  static const std::filesystem::path dir = std::filesystem::canonical("/proc/self/exe").parent_path();
  return dir;
}
std::string builtProgram(const char* name) { return (testBinDir() / name).string(); }
std::string builtLibrary(const char* name) { return (testBinDir().parent_path() / "lib" / name).string(); }
}  // namespace

std::string accelBinary() {
  const char* bin = std::getenv("ACCEL_BIN");
  return bin && *bin ? bin : builtProgram(ACCEL_NAME);
}
std::string accelTrain() { return builtProgram(ACCEL_TRAIN_NAME); }
std::string envWorker() { return builtProgram(ENV_WORKER_NAME); }
std::string outputWorker() { return builtProgram(OUTPUT_WORKER_NAME); }
std::string runtimeWorker() { return builtProgram(RUNTIME_WORKER_NAME); }
std::string childReport() { return builtProgram(CHILD_REPORT_NAME); }
std::string fakeNvmlLibrary() { return builtLibrary(FAKE_NVML_NAME); }
std::string fakeCudaLibrary() { return builtLibrary(FAKE_CUDA_NAME); }

std::vector<std::string> launchArgs(std::vector<std::string> launcher, std::vector<std::string> worker) {
  std::vector<std::string> argv = {accelBinary(), "launch", "--cpu", "--main_process_port", "0"};
  argv.insert(argv.end(), launcher.begin(), launcher.end());
  argv.push_back(envWorker());
  argv.insert(argv.end(), worker.begin(), worker.end());
  return argv;
}

std::vector<std::string> machineLaunch(const std::vector<std::string>& flags, const std::vector<std::string>& extra,
                                       const std::vector<std::string>& program) {
  std::vector<std::string> argv = {accelBinary(), "launch"};
  for (const auto* part : {&flags, &extra, &program}) argv.insert(argv.end(), part->begin(), part->end());
  return argv;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "accel-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  std::string p = file(name);
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace accel::test
