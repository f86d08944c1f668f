// SPDX-License-Identifier: Apache-2.0
// The launcher as the subreaper of its workers' descendants. A process a worker started that
// outlives its parent and left the worker's process group (a daemon that called setsid(), a
// double fork) would otherwise go to init, keep the job's output pipes open (the launcher would
// wait for it) and outlive the job. As a subreaper (PR_SET_CHILD_SUBREAPER) the launcher becomes
// its parent instead, so it can end it with the job.
// What this cannot cover: a descendant under another subreaper, and every descendant once the
// launcher itself is SIGKILLed (they go to init then; workers die by PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <vector>

namespace accel::process {

// Makes this process the subreaper of its descendants (Linux >= 3.4); false if refused.
bool adoptOrphanedDescendants();

// This process's children that are not in `workers`: once the workers have exited, the
// descendants that were re-parented to it. Read from /proc/self/task/*/children, or from every
// /proc/PID/stat where the kernel has no such files.
std::vector<pid_t> adoptedChildren(const std::vector<pid_t>& workers);

// This process's children found by reading every /proc/PID/stat (the fallback above; declared
// here for its test).
std::vector<pid_t> childrenFromProcScan();

// SIGKILLs every adopted child and its process group; returns how many there were.
int killAdoptedChildren(const std::vector<pid_t>& workers);

}  // namespace accel::process
