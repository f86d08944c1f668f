// SPDX-License-Identifier: Apache-2.0
// Every kind of child accel starts goes through one set-up (lib/common/process/child.h): each
// kind is started here, the way accel starts it, running child_report, which says what it got
// from /proc/self/status and prctl. The parent blocks and ignores signals for its own reasons
// first, as a launcher does; no child may inherit them, except an ignore that is the user's
// choice for the whole job (SIGHUP under nohup, SIGUSR1 trapped with '').
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>

#include "lib/common/process/answering_child.h"
#include "lib/common/process/child.h"
#include "lib/common/process/child_process.h"
#include "lib/launch/fleet/member_process.h"
#include "lib/launch/stacks/stack_collector.h"
#include "lib/launch/supervise/worker_process.h"
#include "tests/support/process.h"

using namespace accel;
using accel::test::childReport;
using accel::test::slurp;

namespace {

// The launcher's own state while it starts a child: signals blocked for its signalfd, SIGPIPE
// and SIGTTIN ignored, SIGINT ignored by a foreground step; SIGHUP and SIGUSR1 ignored as
// `nohup` and `trap '' USR1` leave them. Restored when it goes.
class LauncherSignals {
 public:
  LauncherSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGQUIT, SIGUSR2, SIGWINCH}) sigaddset(&set, s);
    ::sigprocmask(SIG_BLOCK, &set, &old_mask_);
    for (int s : {SIGPIPE, SIGTTIN, SIGINT, SIGHUP, SIGUSR1}) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      ::sigaction(s, &ignore, &old_[s]);
    }
  }
  ~LauncherSignals() {
    for (auto& [s, action] : old_) ::sigaction(s, &action, nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }

 private:
  sigset_t old_mask_;
  std::map<int, struct sigaction> old_;
};

// child_report's lines as name -> value.
std::map<std::string, std::string> parse(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string line = text.substr(at, nl - at);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto value = line.find_first_not_of(" \t", colon + 1);
    out[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return out;
}

// All of `fd` until its end (it may be non-blocking), at most 20 s.
std::string readAll(int fd) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (char buf[4096]; std::chrono::steady_clock::now() < deadline;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
  }
  return out;
}

unsigned long long bits(const std::map<std::string, std::string>& r, const char* key) {
  REQUIRE(r.count(key));
  return std::stoull(r.at(key), nullptr, 16);
}

// What every kind must get: nothing blocked; ignored only what the user ignored for the job.
void checkSignals(const std::map<std::string, std::string>& r) {
  CHECK(bits(r, "SigBlk") == 0);
  CHECK(bits(r, "SigIgn") == (test::signalBit(SIGHUP) | test::signalBit(SIGUSR1)));
}

std::map<std::string, std::string> waitAndParse(pid_t pid, const std::string& out) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  return parse(out);
}

}  // namespace

TEST_CASE("child set-up: a worker", "[launch][process]") {
  LauncherSignals launcher;
  launch::plan::WorkerSpec spec;
  spec.argv = {childReport()};
  launch::supervise::WorkerProcess w;
  w.spec = &spec;
  launch::supervise::spawnWorker(w, {}, {});
  const auto r = waitAndParse(w.pid, readAll(w.out_fd));
  checkSignals(r);
  CHECK(r.at("PDeathSig") == std::to_string(SIGKILL));  // no worker outlives its launcher
  CHECK(r.at("OwnGroup") == "1");
  ::close(w.out_fd);
  ::close(w.err_fd);
}

TEST_CASE("child set-up: a hostfile head's launcher", "[launch][process]") {
  LauncherSignals launcher;
  launch::fleet::FleetMember member;
  member.argv = {childReport()};
  launch::fleet::Child c;
  c.m = &member;
  launch::fleet::spawn(c);
  const auto r = waitAndParse(c.pid, readAll(c.out.fd));
  checkSignals(r);
  CHECK(r.at("PDeathSig") == std::to_string(SIGTERM));  // the head's death stops the job in order
  CHECK(r.at("OwnGroup") == "1");
  for (int fd : {c.in, c.out.fd, c.err.fd}) ::close(fd);
}

TEST_CASE("child set-up: the stack collector", "[launch][process]") {
  LauncherSignals launcher;
  int ends[2];
  REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
  const int out = ends[1];
  const pid_t pid = process::spawnChild(process::answeringChild([out] {
    ::dup2(out, 1);
    ::execl(childReport().c_str(), "child_report", nullptr);
    return 127;
  }));
  ::close(ends[1]);
  const auto r = waitAndParse(pid, readAll(ends[0]));
  ::close(ends[0]);
  checkSignals(r);
  CHECK(r.at("PDeathSig") == std::to_string(SIGKILL));
  CHECK(r.at("OwnGroup") == "1");
}

TEST_CASE("child set-up: a command's foreground step and a captured program", "[launch][process]") {
  LauncherSignals launcher;
  const auto captured = process::captureOutputs({{childReport()}}, std::chrono::seconds(20), false).front();
  CHECK(captured.status == 0);
  const auto r = parse(captured.output);
  checkSignals(r);
  CHECK(r.at("PDeathSig") == "0");  // a step ends with its caller, not by a signal
  CHECK(r.at("OwnGroup") == "0");   // it shares the terminal's group: Ctrl-C reaches it

  test::TempDir dir;
  const std::string file = dir.file("report");
  CHECK(process::runForeground({"/bin/sh", "-c", "exec \"$0\" > \"$1\"", childReport(), file}).status == 0);
  const auto f = parse(slurp(file));
  checkSignals(f);
  CHECK(f.at("OwnGroup") == "0");
}

TEST_CASE("child set-up: a launcher handing over to another program in place (srun)", "[launch][process]") {
  int ends[2];
  REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    LauncherSignals launcher;
    ::dup2(ends[1], 1);
    process::ChildSpec spec;
    spec.argv = {childReport()};
    process::execInPlace(spec);
    _exit(127);
  }
  ::close(ends[1]);
  const auto r = waitAndParse(pid, readAll(ends[0]));
  ::close(ends[0]);
  checkSignals(r);
}
