// SPDX-License-Identifier: Apache-2.0
// Whole-file reads and crash-safe writes.
#pragma once

#include <string>

namespace accel {

// Writes `content` to `path` so that readers see either the old file or the complete new one:
// a temporary file in the same directory, fsync, then rename over `path`. An existing file's
// permission bits are kept. Creates missing parent directories when `create_parents` is set.
// Throws Error naming the path and the OS reason; on failure `path` is untouched.
void writeFileAtomic(const std::string& path, const std::string& content, bool create_parents = false);

// Reads a whole file. Throws Error naming the path and the OS reason.
std::string readFile(const std::string& path);

bool fileExists(const std::string& path);

}  // namespace accel
