// SPDX-License-Identifier: Apache-2.0
// The terminal's settings, part of resolveLaunchSettings (launch_settings.h): flag > ACCEL_*
// variable > default.
//   pty                auto | on | off (--pty, ACCEL_PTY): pseudo-terminals for the worker
//                      streams shown on a terminal; on: for every shown stream, terminal or not
//   stdin_rank         the rank that reads the user's input, -1 for none (--stdin_rank,
//                      ACCEL_STDIN_RANK; default 0)
//   progress_interval  seconds between two frames of one progress bar written where the
//                      console is not a terminal (ACCEL_PROGRESS_INTERVAL; default 10)
#pragma once

#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

// Sets `out`'s pty, stdin_rank and progress_interval; `world`: the job's processes as this
// machine knows them. Throws UsageError naming the flag or variable and what it said.
void resolveTerminal(Output& out, long long world, const LaunchOptions& o, const facts::Machine& facts);

}  // namespace accel::launch::settings
