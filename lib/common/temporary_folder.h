// SPDX-License-Identifier: Apache-2.0
// Where the launcher and its commands keep temporary files: the workers' error files, stacks
// gathered before a stop outside a --log_dir, `accel test`'s script runner.
#pragma once

#include <string>

namespace accel {

// $TMPDIR where set and not empty, else /tmp (Python's tempfile and torchrun choose alike).
std::string temporaryDirectory();

// A new folder `<temporaryDirectory()>/<prefix>XXXXXX` that only this user can enter (mkdtemp).
// Throws Error naming the folder it could not make, why, and what to do.
std::string makeTemporaryFolder(const std::string& prefix);

}  // namespace accel
