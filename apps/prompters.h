// SPDX-License-Identifier: Apache-2.0
// The two ways `accel config` asks questions: an interactive terminal (arrow/digit menus, raw
// mode) and plain lines on stdin (one answer per line, for `printf … | accel config`).
#pragma once

#include <memory>

#include "lib/config/prompter.h"

namespace accel {

// Terminal mode when stdin and stdout are both terminals, else line mode.
std::unique_ptr<Prompter> makePrompter();

// Raw-mode terminal on fds 0/1. Restores the terminal on return, on Ctrl-C and on SIGTERM/SIGHUP.
std::unique_ptr<Prompter> makeTerminalPrompter();

// Reads one answer per line from stdin and echoes it to stdout, so a transcript reads like a
// session. A menu answer is an index or a choice's text; an empty line takes the default.
std::unique_ptr<Prompter> makeLinePrompter();

}  // namespace accel
