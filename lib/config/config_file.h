// SPDX-License-Identifier: Apache-2.0
// Reading a config file from disk before it is parsed (loader.h): it must exist, be a file, and
// be no larger than any real config could be. A default_config.yaml holds a few dozen keys, a
// few KB; anything over kMaxConfigBytes is refused at once, before it is read, so a wrong file
// (a model checkpoint, a log) costs neither time nor memory. A pipe or device is read up to the
// same limit. Thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace accel {

inline constexpr size_t kMaxConfigBytes = 1000 * 1000;  // 1 MB

// The file's text. Throws ConfigError (exit 2) naming the path when it is missing, a directory,
// unreadable or too large.
std::string readConfigText(const std::string& path);

}  // namespace accel
