// SPDX-License-Identifier: Apache-2.0
// What the kernel says of a process right now (/proc/PID/stat): whether it exists and whether
// it can make progress. The launcher answers questions about its workers with it, and a rank
// that waited in vain for a peer on its own machine names the peer's state with it: evidence,
// never a guess; `accel top` and /metrics show its CPU time and memory. Thread-safe.
#pragma once

#include <sys/types.h>

#include <string>

namespace accel::process {

struct ProcessState {
  bool exists = false;
  char state = '?';            // /proc's letter: R running, S sleeping, D disk wait, T stopped, t traced, Z zombie
  double cpu_seconds = 0;      // user + system time of the process itself
  unsigned long long rss = 0;  // resident memory, bytes

  bool stopped() const { return exists && (state == 'T' || state == 't'); }
  // No such process, or one that exited and waits to be reaped (a zombie).
  bool gone() const { return !exists || state == 'Z' || state == 'X'; }
  // "alive but stopped (state T: SIGSTOP or Ctrl-Z)", "alive and running (state R)", "gone", …
  std::string describe() const;
};

ProcessState processState(pid_t pid);

// "SIGTERM"; "SIG34" for a signal without an abbreviation (the real-time ones).
std::string signalName(int signal);

}  // namespace accel::process
