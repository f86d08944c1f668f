// SPDX-License-Identifier: Apache-2.0
// How the wizard talks to a person. The terminal implementation (arrow-key menus) and the
// line implementation (answers piped on stdin) live in apps/; tests may script their own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace accel {

class Prompter {
 public:
  virtual ~Prompter() = default;
  // Shows `prompt` and `choices` and returns the selected index (highlight starts at
  // `default_index`). Blocks for input. Throws Interrupted (Ctrl-C) or Error (input ended).
  virtual size_t choose(std::string_view prompt, const std::vector<std::string>& choices, size_t default_index) = 0;
  // Shows `prompt` verbatim and returns the line typed, without its newline. Throws as choose.
  virtual std::string readLine(std::string_view prompt) = 0;
  // Prints one line of feedback (a re-ask reason, a note).
  virtual void say(std::string_view line) = 0;
};

}  // namespace accel
