// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/adopted.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace accel::process {

bool adoptOrphanedDescendants() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

namespace {

// The parent pid in /proc/PID/stat: the field after the ")" that ends the command name.
pid_t parentOf(const std::string& stat) {
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream in(stat.substr(close + 1));
  char state = 0;
  pid_t ppid = -1;
  in >> state >> ppid;
  return ppid;
}

}  // namespace

std::vector<pid_t> childrenFromProcScan() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (parentOf(stat) == self) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

namespace {

// One "children" file per thread: a child belongs to the thread that forked it (all of them
// the launcher's one thread here, but the listing does not rely on it).
bool childrenByTask(std::vector<pid_t>& out) {
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    if (!in) return false;
    for (pid_t pid; in >> pid;) out.push_back(pid);
  }
  return !ec;
}

}  // namespace

std::vector<pid_t> adoptedChildren(const std::vector<pid_t>& workers) {
  std::vector<pid_t> out;
  std::vector<pid_t> children;
  if (!childrenByTask(children)) children = childrenFromProcScan();
  for (pid_t pid : children) {
    if (std::find(workers.begin(), workers.end(), pid) == workers.end()) out.push_back(pid);
  }
  return out;
}

int killAdoptedChildren(const std::vector<pid_t>& workers) {
  const auto adopted = adoptedChildren(workers);
  for (pid_t pid : adopted) {
    ::kill(-pid, SIGKILL);  // its group, when it leads one (a setsid() daemon does)
    ::kill(pid, SIGKILL);
  }
  return static_cast<int>(adopted.size());
}

}  // namespace accel::process
