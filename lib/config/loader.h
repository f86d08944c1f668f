// SPDX-License-Identifier: Apache-2.0
// Reads default_config.yaml / .json files (Accelerate's format) into a Config, the way
// Accelerate 1.15's loader reads them: a file it refuses, accel refuses (errors); a file it
// accepts, accel accepts with the same values. What Accelerate's loader lets through but cannot
// work (a value of the wrong type or outside its choices, keys that contradict each other) is
// kept as written and listed as a problem, which `accel launch` refuses and `accel config
// show` warns about; what is merely odd (a key written twice, a nested key Accelerate does not
// read) is a warning. Every diagnostic says file:line:column; nothing is silently defaulted.
#pragma once

#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/config/config.h"

namespace accel {

struct LoadResult {
  Config config;
  std::vector<Diagnostic> errors;    // Accelerate refuses the file too: nothing of it is usable
  std::vector<Diagnostic> problems;  // values kept as written that no launch can use
  std::vector<Diagnostic> warnings;  // harmless: a key given twice (the last wins), a key nobody reads
  std::vector<std::string> notes;    // normalisations applied (legacy keys converted, …)
};

// Parses file text. `path` labels diagnostics and goes into config.path. Never throws for bad
// input; the result lists it all.
LoadResult parseConfigText(const std::string& text, const std::string& path);

// Reads (config_file.h) and parses a file. Throws ConfigError when it is missing, unreadable or
// has errors; its problems and warnings are the caller's to show or refuse.
LoadResult loadConfigFile(const std::string& path);

}  // namespace accel
