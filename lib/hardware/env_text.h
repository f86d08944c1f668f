// SPDX-License-Identifier: Apache-2.0
// The text form of `accel env`: Accelerate's "- Key: value" lines, with what a launch needs.
#pragma once

#include <string>

#include "lib/hardware/env_report.h"

namespace accel {

// The "- Key: value" lines of the text report (without the config block).
std::string envReportText(const EnvReport& report);

}  // namespace accel
