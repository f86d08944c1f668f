// SPDX-License-Identifier: Apache-2.0
// `accel launch --help`, written from the two flag tables (the config schema's launch flags and
// launcher_flag_table.h), grouped as Accelerate groups them; and the same flags for shell
// completion and the manual page.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/settings/launch_args.h"

namespace accel::launch::settings {

std::string launchHelp();
// `accel torchrun --help`: torchrun's flags only.
std::string torchrunHelp();

// What shell completion and the manual page show of one flag of `grammar` (apps/reference/): the
// spellings the parser takes ("--num_processes", "--num-processes", and "-t" where there is
// one), whether it takes a value, the words it takes where they are few, whether its value names
// a file or a folder, and its help and group as `--help` shows them. Table order.
struct LaunchFlagDoc {
  std::vector<std::string> spellings;
  bool takes_value = false;
  std::vector<std::string> choices;
  enum class Value { Any, File, Folder } value = Value::Any;
  std::string group, help;
};
std::vector<LaunchFlagDoc> launchFlagDocs(Grammar grammar);

}  // namespace accel::launch::settings
