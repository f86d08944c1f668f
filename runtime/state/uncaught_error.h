// SPDX-License-Identifier: Apache-2.0
// An accel::Error that escapes a worker's main(): the C++ runtime would abort (exit 134, a core
// file) and lose the message and its hint. Once installed (when the runtime library is loaded,
// and again by the Accelerator's constructor),
// std::terminate with an accel::Error in flight prints "accel: error: <message>" and
// "accel: hint: <hint>" on stderr, where the launcher's failure summary shows a rank's last
// lines, and ends the process with the Error's own exit status (1, or 2 for a usage error).
// Any other exception, or terminate without one, goes to the handler that was there before.
#pragma once

namespace accel {

void reportUncaughtErrors();  // idempotent

}  // namespace accel
