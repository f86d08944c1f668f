// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/job_story.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include "lib/common/build_info.h"
#include "lib/common/process/process_state.h"
#include "lib/launch/job/hang_watch.h"

namespace accel::launch::supervise {

namespace {

using StoryJson = nlohmann::ordered_json;

// torchrun's rdzv_backend for the way this job's machines meet.
std::string backendOf(const plan::LaunchPlan& p) {
  if (p.etcd) return "etcd-v2";
  return p.max_machines > 1 ? "c10d" : "static";
}

// The program's name, as torchrun's entry_point (a path's last part).
std::string entryPoint(const plan::LaunchPlan& p) {
  if (p.workers.empty() || p.workers[0].argv.empty()) return "";
  const std::string& program = p.workers[0].argv[0];
  return program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
}

}  // namespace

std::string JobStory::verdictOf(const job::JobEvent& end, int code) {
  if (end.signal) return "interrupted";
  if (code == 0) return "succeeded";
  if (end.failure) return "failed";
  return job::HangWatch::isHang(end.message) ? "hung" : "ended";
}

void JobStory::open(const std::string& run_dir, job::JobLink& link) {
  link_ = &link;
  log_.open(plan_, run_dir);
  record("launcher_started", {{"pid", ::getpid()}, {"procs", plan_.workers.size()}, {"version", buildInfo().version}});
  if (decides()) {
    record("job_started",
           {{"machines", plan_.num_machines}, {"world_size", plan_.world_size}, {"entry_point", entryPoint(plan_)}});
  }
}

void JobStory::rendezvousDone() {
  if (!decides()) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since_).count();
  record("rendezvous_done", {{"machines", plan_.num_machines}, {"duration_ms", ms}});
}

void JobStory::roundStarts(int round, int restarts) {
  round_ = round;
  if (!decides()) return;
  StoryJson procs = StoryJson::array();
  for (const auto& share : plan_.layout) procs.push_back(share.procs);
  record(
      "round_formed",
      {{"world_size", plan_.world_size}, {"machines", plan_.num_machines}, {"procs", procs}, {"restarts", restarts}});
}

void JobStory::workerStarted(const WorkerProcess& w) {
  record("worker_started", {{"rank", w.spec->rank}, {"local_rank", w.spec->local_rank}, {"pid", w.pid}});
}

void JobStory::workerExited(const WorkerProcess& w) {
  StoryJson fields = {
      {"rank", w.spec->rank}, {"local_rank", w.spec->local_rank}, {"pid", w.pid}, {"exit_code", w.exitCode()}};
  fields["signal"] = WIFSIGNALED(w.status) ? StoryJson(process::signalName(WTERMSIG(w.status))) : StoryJson(nullptr);
  fields["stopped_by_launcher"] = w.stopped_by_us;
  fields["seconds"] = w.exited_at;
  record("worker_exited", std::move(fields));
}

void JobStory::decided(const job::JobEvent& d) {
  if (!decides() || d.kind != job::JobEvent::Kind::Restart) return;
  if (!d.failure) {
    return record("machines_changed", {{"reason", d.message}, {"next_round", d.round}});
  }
  record("restart", {{"reason", fmt::format("{} on {} {}", d.failure->who, d.failure->host, d.failure->exit_text)},
                     {"failed_rank", d.failure->rank},
                     {"exit_code", d.failure->exit_code},
                     {"restarts", d.restarts},
                     {"max_restarts", plan_.max_restarts},
                     {"next_round", d.round}});
}

void JobStory::stacksGathered(const std::string& why, size_t stacks, size_t notes) {
  if (!decides()) return;
  if (job::HangWatch::isHang(why)) record("hang_detected", {{"reason", why}});
  record("stacks_gathered", {{"reason", why}, {"stacks", stacks}, {"missing", notes}});
}

void JobStory::ended(const job::JobEvent& end, int code) {
  if (!decides()) return record("launcher_ended", {{"exit_code", code}});
  StoryJson fields = {{"exit_code", code}, {"verdict", verdictOf(end, code)}};
  if (!end.message.empty()) fields["message"] = end.message;
  if (end.signal) fields["signal"] = process::signalName(end.signal);
  if (end.failure) {
    fields["failure"] = {{"rank", end.failure->rank},
                         {"host", end.failure->host},
                         {"pid", end.failure->pid},
                         {"exit_code", end.failure->exit_code},
                         {"exit", end.failure->exit_text}};
  }
  record("job_ended", std::move(fields));
}

void JobStory::record(const char* name, StoryJson fields) {
  watch::Event e{name, watch::wallClockNow(), plan_.run_id, plan_.host, plan_.machine_rank, round_, std::move(fields)};
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
  watch::TorchrunContext context{
      plan_.role, backendOf(plan_), entryPoint(plan_), plan_.num_machines, plan_.world_size, plan_.restarts, seconds};
  log_.record(e, context);
  if (link_) link_->sendEvent(watch::eventLine(e));
}

}  // namespace accel::launch::supervise
