// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/adopted.h"

#include <signal.h>
#include <sys/prctl.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace accel {

bool adoptOrphanedDescendants() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

std::vector<pid_t> adoptedChildren(const std::vector<pid_t>& workers) {
  std::vector<pid_t> out;
  std::error_code ec;
  // One "children" file per thread: a child belongs to the thread that forked it (all of them
  // the launcher's one thread here, but the listing does not rely on it).
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid; in >> pid;) {
      if (std::find(workers.begin(), workers.end(), pid) == workers.end()) out.push_back(pid);
    }
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

}  // namespace accel
