// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/process_state.h"

#include <fstream>
#include <iterator>

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
  return s;
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
