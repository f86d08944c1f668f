// SPDX-License-Identifier: Apache-2.0
// Runs a LaunchPlan's workers to the end: prefixed output, fail-fast (the first worker to fail
// stops the others: SIGTERM to every process group, SIGKILL after the grace period), signal
// forwarding (SIGINT/SIGTERM/SIGHUP; a second Ctrl-C kills), restarts, and a failure summary.
// Event-driven (signalfd + poll): exits are noticed as they happen, never by sleeping.
// Blocking; call from the main thread of a single-threaded process.
#pragma once

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::supervise {

// Runs `first` (round 0's plan, plan/build.h) and every round after it, each round's plan built
// anew from `s` and `f` with what the job channel says (the layout settled at the join, the
// round's port). Returns the launcher's exit code: 0 when every worker exited 0; the first failed
// worker's code (128 + signal for a signal) otherwise; 128 + signal (130 for SIGINT) when
// interrupted. Progress and the failure summary go to stderr as "accel: …" lines.
int superviseWorkers(const settings::LaunchSettings& s, const facts::Facts& f, const plan::LaunchPlan& first);

}  // namespace accel::launch::supervise
