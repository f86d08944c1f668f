// SPDX-License-Identifier: Apache-2.0
// Reads default_config.yaml / .json files (Accelerate's format) into a checked Config.
// Every problem is reported with file:line:column; nothing is silently defaulted.
#pragma once

#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/config/config.h"

namespace accel {

struct LoadResult {
  Config config;
  std::vector<Diagnostic> errors;  // empty when the file is usable
  std::vector<std::string> notes;  // normalisations applied (legacy keys converted, …)
};

// Parses file text. `path` labels diagnostics and goes into config.path. Never throws for bad
// input; the result's errors list it all (syntax, unknown keys, types, consistency).
LoadResult parseConfigText(const std::string& text, const std::string& path);

// Reads and parses a file. Throws ConfigError when it is missing or has errors.
LoadResult loadConfigFile(const std::string& path);

}  // namespace accel
