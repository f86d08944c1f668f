// SPDX-License-Identifier: Apache-2.0
// Internal to lib/launch: the table of `accel launch`'s own flags, the ones that are not config
// keys (those are rows of the config schema). Each row names the LaunchOptions field it fills;
// the field's type says how the flag parses (bool: a switch; a list: repeatable).
#pragma once

#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lib/launch/settings/launch_options.h"

namespace accel::launch::settings {

using LaunchField = std::variant<bool LaunchOptions::*, std::string LaunchOptions::*,
                                 std::optional<std::string> LaunchOptions::*, std::optional<long long> LaunchOptions::*,
                                 std::optional<double> LaunchOptions::*, std::vector<std::string> LaunchOptions::*>;

struct LauncherFlag {
  std::string_view name;             // underscore spelling, without "--"
  std::string_view short_name = {};  // "t" for -t; empty for none
  LaunchField field = {};            // what it fills; ignored when `unsupported` or `refused` is set
  std::string_view group;
  std::string_view help;
  std::string_view unsupported = {};  // "TPU", "SageMaker": accepted only to say accel does not launch it
  long long min = LLONG_MIN;          // an integer flag's range
  long long max = LLONG_MAX;
  // torchrun 2.15 has this flag: `accel torchrun` accepts it, and PET_<NAME> gives its default
  // (torchrun's env/check_env actions) unless `no_env`.
  bool torchrun = false;
  bool no_env = false;
  std::string_view refused = {};  // torchrun's, refused at once: why, and what accel does instead
  // The words it takes, where they are few (shell completion offers them; the parser checks its
  // own way).
  std::vector<std::string_view> choices = {};
};

// The group of the launcher's own settings, listed after the config-key flags in --help.
inline constexpr std::string_view kLauncherGroup = "Launcher";
inline constexpr std::string_view kTorchrunGroup = "torchrun's (also read from PET_<FLAG>)";

const std::vector<LauncherFlag>& launcherFlags();

// The config-key flags that torchrun 2.15 has too (Accelerate's spelling is torchrun's).
inline constexpr std::string_view kTorchrunConfigFlags[] = {"rdzv_backend"};

// A switch takes no value: its field is a bool.
inline bool isSwitch(const LauncherFlag& row) { return std::holds_alternative<bool LaunchOptions::*>(row.field); }

}  // namespace accel::launch::settings
