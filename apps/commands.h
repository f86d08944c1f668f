// SPDX-License-Identifier: Apache-2.0
// The accel subcommands, free of CLI parsing (main.cc owns CLI11). Each returns an exit status
// and throws accel::Error subclasses for main to print.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/launch_options.h"

namespace accel {

struct ConfigFileOption {
  std::string path;  // empty: Accelerate's default location
};

int runConfigWizard(const ConfigFileOption& file);
int runConfigDefault(const ConfigFileOption& file, const std::string& mixed_precision,
                     bool force);
int runConfigUpdate(const ConfigFileOption& file);
int runConfigShow(const ConfigFileOption& file, bool as_json);
int runConfigValidate(const std::vector<std::string>& files);
int runEnv(const ConfigFileOption& file, bool as_json);
int runLaunch(const LaunchOptions& options);

}  // namespace accel
