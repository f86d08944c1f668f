// SPDX-License-Identifier: Apache-2.0
// `accel completion SHELL`: a completion script for bash (with or without the bash-completion
// package), zsh or fish, written from cli_reference.h. It completes commands and subcommands,
// every option in both spellings (the underscore one unless the word typed has a dash after its
// "--"), the words of options that take few (--mixed_precision no fp16 bf16 fp8), file and folder
// names where an option or operand takes one, and files after launch's PROGRAM.
#pragma once

#include <string>
#include <vector>

#include "apps/reference/cli_reference.h"

namespace accel {

// Throws UsageError (exit 2) for a shell not in kCompletionShells, listing them.
std::string completionScript(const std::vector<CommandRef>& commands, const std::string& shell);

}  // namespace accel
