// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/stacks/running_jobs.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::stacks {

namespace {

std::string slurpProc(pid_t pid, const char* file) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The two variables a worker is recognised by, and where its launcher answers.
struct Marks {
  std::string run_id, rank, socket;
};

Marks marksOf(pid_t pid) {
  Marks m;
  for (const std::string& entry : split(slurpProc(pid, "environ"), '\0')) {
    const std::string value = entry.substr(entry.find('=') + 1);
    if (startsWith(entry, std::string(launch_env::kAccelRunId) + "=")) m.run_id = value;
    if (startsWith(entry, std::string(launch_env::kRank) + "=")) m.rank = value;
    if (startsWith(entry, std::string(launch_env::kLauncherSocket) + "=")) m.socket = value;
  }
  return m;
}

pid_t parentOf(pid_t pid) {
  const std::string stat = slurpProc(pid, "stat");
  const size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string state;
  pid_t parent = 0;
  rest >> state >> parent;
  return parent;
}

std::vector<pid_t> allPids() {
  std::vector<pid_t> pids;
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      if (auto n = parseInt(e->d_name); n && *n > 0) pids.push_back(static_cast<pid_t>(*n));
    }
    ::closedir(d);
  }
  return pids;
}

std::string commandLine(pid_t pid) {
  std::string text = slurpProc(pid, "cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return trim(text);
}

std::string listed(const std::vector<RunningJob>& jobs) {
  std::string out;
  for (const auto& j : jobs) {
    out += fmt::format("{}run {} (launcher pid {}, {} rank(s) here)", out.empty() ? "" : "; ", j.run_id, j.launcher,
                       j.ranks.size());
  }
  return out;
}

}  // namespace

std::vector<RunningJob> findRunningJobs() {
  std::map<std::pair<std::string, pid_t>, RunningJob> jobs;
  for (pid_t pid : allPids()) {
    const Marks m = marksOf(pid);
    auto rank = parseInt(m.rank);
    if (m.run_id.empty() || !rank) continue;
    const pid_t parent = parentOf(pid);
    if (parent <= 0 || marksOf(parent).run_id == m.run_id) continue;
    RunningJob& job = jobs[{m.run_id, parent}];
    job.run_id = m.run_id;
    job.launcher = parent;
    if (job.socket.empty()) job.socket = m.socket;
    job.ranks.push_back({static_cast<int>(*rank), pid});
  }
  std::vector<RunningJob> out;
  for (auto& [key, job] : jobs) {
    std::sort(job.ranks.begin(), job.ranks.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
    out.push_back(job);
  }
  return out;
}

RunningJob selectJob(const std::vector<RunningJob>& jobs, const std::string& selector) {
  if (selector.empty()) {
    if (jobs.size() == 1) return jobs.front();
    if (jobs.empty()) {
      throw UsageError("no accel job is running on this machine (that this user may see)",
                       "start one with `accel launch`, or run this as the user (or root) that runs the job");
    }
    throw UsageError("several accel jobs are running: " + listed(jobs),
                     "name one by its launcher's pid or its run id (accel stacks PID, accel top RUN_ID)");
  }
  for (const auto& j : jobs) {
    if (j.run_id == selector || std::to_string(j.launcher) == selector) return j;
  }
  if (auto pid = parseInt(selector); pid && *pid > 0) {
    const std::string what = commandLine(static_cast<pid_t>(*pid));
    throw UsageError(what.empty() ? fmt::format("no process {} (that this user may see)", *pid)
                                  : fmt::format("process {} is not the launcher of a running job: it runs `{}`", *pid,
                                                what.substr(0, 200)),
                     jobs.empty() ? "no accel job is running on this machine" : "running: " + listed(jobs));
  }
  throw UsageError("no running job has run id '" + selector + "'",
                   jobs.empty() ? "no accel job is running on this machine" : "running: " + listed(jobs));
}

}  // namespace accel::launch::stacks
