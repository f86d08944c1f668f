// SPDX-License-Identifier: Apache-2.0
// The one way accel starts a process (ninja's subprocess-posix is the model): every fork goes
// through spawnChild with a ChildSpec, and every child runs the same async-signal-safe set-up
// between fork and exec:
//   1. its own process group, where asked (so a signal reaches all it starts);
//   2. the parent's death as its signal (PR_SET_PDEATHSIG), where asked; a parent already gone
//      by then ends the child at once (exit 1);
//   3. the parent as its ptracer, where asked (Yama's ptrace_scope 1 lets only it, and what it
//      starts, read the child's stack);
//   4. its standard streams, /dev/null for stdin where none is given; the descriptors it keeps
//      across exec (all others are close-on-exec);
//   5. the signal mask emptied, and SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGCHLD, SIGTTIN and SIGTTOU
//      back to their defaults: accel's own processes block or ignore these for their own
//      reasons, never on the child's behalf. SIGHUP, SIGUSR1, SIGUSR2 and SIGTSTP keep what the
//      parent inherited: an ignore there is the user's choice for the whole job (`nohup`,
//      `trap '' USR1`; process/signal_channel.h);
//   6. its CPUs (sched_setaffinity) and its memory's preferred NUMA node (set_mempolicy), where
//      given: a failure is said and the child runs unpinned;
//   7. exec (argv[0] searched on PATH when `search_path`), or the body for a child that runs
//      accel's own code; an exec that fails says so on the child's stderr and exits 127.
// The kinds of child differ only in the fields below, each with its reason at the call site.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace accel::process {

struct ChildSpec {
  std::vector<std::string> argv;
  bool search_path = false;  // argv[0] without '/' is looked up on PATH
  // "NAME=VALUE" entries; `inherit_env` true: the parent's environment instead.
  std::vector<std::string> env;
  bool inherit_env = true;
  int stdin_fd = -1;           // -1: /dev/null
  int stdout_fd = -1;          // -1: the parent's
  int stderr_fd = -1;          // -1: the parent's
  std::vector<int> keep_fds;   // open across exec besides the three
  bool own_group = false;      // setpgid(0, 0)
  int death_signal = 0;        // PR_SET_PDEATHSIG; 0: none
  bool parent_traces = false;  // PR_SET_PTRACER the parent
  std::vector<int> cpus;       // sched_setaffinity; empty: the parent's
  int memory_node = -1;        // set_mempolicy(MPOL_PREFERRED, this node); -1: the parent's policy
  // Said after exec's reason when the program exists but exec found no file (its #! line names
  // an interpreter that is missing).
  std::string missing_interpreter_note;
  // Runs instead of exec (accel's own code in a child of its own); its result is the exit code.
  std::function<int()> body;
};

// Forks a child as `spec` says and returns its pid; the parent also puts it in its own group
// (where asked) before returning, so a signal to the group cannot miss it. Throws Error naming
// fork's reason.
pid_t spawnChild(const ChildSpec& spec);

// This process becomes `spec`'s program (steps 5 to 7 above, no fork): for a launcher that hands
// over to another (srun). Returns only when exec fails, with errno set.
void execInPlace(const ChildSpec& spec);

// The signals the set-up puts back to their default, for tests that read a child's dispositions.
const std::vector<int>& signalsReset();

}  // namespace accel::process
