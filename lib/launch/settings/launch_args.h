// SPDX-License-Identifier: Apache-2.0
// `accel launch`'s command line, driven by two tables: the config schema's rows that carry a
// launch flag (lib/config/schema.h: a flag that sets a config key) and the launcher's own flags
// (launcher_flag_table.cc: --max_restarts, --tee, …, and the TPU/SageMaker flags accepted only to say
// that accel does not launch those). Parsing follows argparse as Accelerate configures it
// (allow_abbrev=False): --name VALUE, --name=VALUE, the dashed spelling --name-with-dashes, a
// switch takes no value, a repeated option keeps its last value (--env appends), and the first
// word that is not an option (or the word after "--") starts the program. Options are looked up
// by hash, so a launch costs the same however many flags Accelerate grows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/launch/settings/launch_options.h"

namespace accel::launch::settings {

// Launch: every flag of both tables. Torchrun: torchrun 2.15's flags only (the rows marked
// torchrun), as its argparse takes them, unambiguous prefixes of long options included.
enum class Grammar { Launch, Torchrun };

// Parses the words after `accel launch` (or `accel torchrun`). Throws UsageError naming the word
// and a fix.
LaunchOptions parseLaunchArgs(const std::vector<std::string>& words, Grammar grammar = Grammar::Launch);

struct LauncherFlag;
// Stores `text` in the field `row` names, as the command line would (torchrun_args.h's PET_*).
// Throws UsageError naming the flag.
void applyLauncherFlag(const LauncherFlag& row, const std::string& text, LaunchOptions& o);

// The value a flag gave config key `key` (LaunchOptions::values), typed by the schema row:
// booleans as true/false/yes/no/1/0/on/off, integers within the row's bounds, enum choices
// (case-folded where the row says), comma lists. Throws UsageError naming the flag.
nlohmann::json typedFlagValue(const std::string& key, const std::string& text);

// Every launch flag name (underscore spelling, without "--"), both tables, for the test that
// compares them with Accelerate's.
std::vector<std::string> launchFlagNames();

}  // namespace accel::launch::settings
