// SPDX-License-Identifier: Apache-2.0
// The accel subcommands, free of CLI parsing (main.cc owns CLI11). Each returns an exit status
// and throws accel::Error subclasses for main to print.
#pragma once

#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/config/loader.h"
#include "lib/launch/launch_options.h"

namespace accel {

struct ConfigFileOption {
  std::string path;  // empty: Accelerate's default location
};

int runConfigWizard(const ConfigFileOption& file);
int runConfigDefault(const ConfigFileOption& file, const std::string& mixed_precision, bool force);
int runConfigUpdate(const ConfigFileOption& file);
int runConfigShow(const ConfigFileOption& file, bool as_json);
int runConfigValidate(const std::vector<std::string>& files);
int runEnv(const ConfigFileOption& file, bool as_json);
int runLaunch(const LaunchOptions& options);

// `accel: warning: where: what` and its hint, for each (main.cc).
void printWarnings(const std::vector<Diagnostic>& diagnostics);
// A loaded file's warnings, and its problems as warnings saying that a launch refuses them.
void printFindings(const LoadResult& loaded);

}  // namespace accel
