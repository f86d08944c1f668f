// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/process_state.h"

#include <string.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace accel::process {

ProcessState processState(pid_t pid) {
  ProcessState s;
  if (pid <= 0) return s;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const size_t paren = text.rfind(')');  // the command name may itself hold ')' or spaces
  if (paren == std::string::npos || paren + 2 >= text.size()) return s;
  s.exists = true;
  s.state = text[paren + 2];
  // After the state (field 3): utime and stime are fields 14 and 15, rss (pages) field 24.
  std::istringstream rest(text.substr(paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0, rss_pages = 0;
  for (int n = 3; n <= 24 && rest >> field; ++n) {
    if (n == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (n == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
    if (n == 24) rss_pages = std::strtoull(field.c_str(), nullptr, 10);
  }
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  static const unsigned long long page = static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE));
  s.cpu_seconds = static_cast<double>(utime + stime) / ticks;
  s.rss = rss_pages * page;
  return s;
}

std::string signalName(int signal) {
  const char* name = ::sigabbrev_np(signal);
  return name ? std::string("SIG") + name : "SIG" + std::to_string(signal);
}

std::string ProcessState::describe() const {
  if (!exists) return "gone (no such process)";
  switch (state) {
    case 'T': return "alive but stopped (state T: SIGSTOP or Ctrl-Z), so not progressing";
    case 't': return "alive but stopped by a debugger (state t), so not progressing";
    case 'Z':
    case 'X': return "exited (a zombie not yet reaped by its parent)";
    case 'R': return "alive and running (state R), but not in this step";
    case 'S': return "alive but waiting elsewhere (state S, sleeping)";
    case 'D': return "alive but in uninterruptible I/O (state D)";
    default: return std::string("alive (state ") + state + ")";
  }
}

}  // namespace accel::process
