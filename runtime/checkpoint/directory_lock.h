// SPDX-License-Identifier: Apache-2.0
// A checkpoint directory belongs to one job at a time. The first save or resume of a process
// takes an exclusive flock(2) on DIR/.accel-lock and keeps it for the life of the process, so
// the kernel releases it when the holder exits or is killed: a dead job never blocks the next
// one, and a restarted round (whose old workers were stopped first) takes it again; a holder of
// the same run (TORCHELASTIC_RUN_ID) is an earlier round's rank still stopping on a machine that
// was lost, and is waited for (defaults.h kEarlierRoundLockWait) instead of refused. The file
// says who holds it (run id, host, pid, start time) for the message a second job gets at once,
// instead of two jobs moving `latest` under each other. Thread-safe; one lock per directory and
// process (asking again is free).
#pragma once

#include <string>

namespace accel {

// Takes DIR's lock for this process (creating DIR) unless it already holds it. Returns "" or,
// when another process holds it, what to tell the user: who holds it and since when. Throws
// Error when DIR or its lock file cannot be created.
std::string lockCheckpointDirectory(const std::string& dir);

// The advice that goes with a refusal.
inline constexpr const char* kDirectoryInUseHint =
    "give this job another checkpoint directory (accel-train: --checkpoint_dir), or wait for that job to end: its lock "
    "goes with its process";

}  // namespace accel
