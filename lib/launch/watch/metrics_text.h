// SPDX-License-Identifier: Apache-2.0
// A launcher's status (job_status.h) in Prometheus' text exposition format, version 0.0.4: each
// family once with its HELP and TYPE, every series labelled by job and host, a rank's also by
// machine, rank and local rank. The job's own series (round, restarts, world size, how it ended)
// come from the launcher that decides for the job only, so that a sum over the launchers counts
// each once.
#pragma once

#include <string>

#include "lib/launch/watch/job_status.h"

namespace accel::launch::watch {

// What /metrics answers with, for its Content-Type header.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string renderMetrics(const MachineStatus& status);

// A label's value as the format quotes it: backslash, double quote and newline escaped.
std::string labelValue(const std::string& text);

}  // namespace accel::launch::watch
