// SPDX-License-Identifier: Apache-2.0
// What `accel completion SHELL` and `accel manual` are made of (completion.h, manual_page.h):
// every command of accel's command table and every option it takes, read from the same
// registrations that parse them, CLI11's for most commands and the launch flag tables
// (lib/launch/settings/launch_help.h) for launch, torchrun and test, so the scripts and the page never
// drift from the parser.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lib/launch/settings/launch_help.h"

namespace accel {

using OptionRef = launch::settings::LaunchFlagDoc;

struct CommandRef {
  std::string path;                      // "config default"; "" for accel itself
  std::string help;                      // its line in `accel --help`
  std::vector<std::string> subcommands;  // the words that may come next
  std::vector<OptionRef> options;
  // What its other words are: files (config validate), a program and its arguments (launch), one
  // of `words` (completion), a command path (help), or nothing to complete.
  enum class Operand { None, Files, Program, Words, Commands } operand = Operand::None;
  std::vector<std::string> words;
  std::string operand_name;  // for the synopsis: "FILES", "PROGRAM [ARGS...]", "SHELL"
};

// accel itself first, then every command in table order.
std::vector<CommandRef> cliReference(const CLI::App& app);

// The shells `accel completion` writes for.
inline const std::vector<std::string> kCompletionShells = {"bash", "zsh", "fish"};

}  // namespace accel
