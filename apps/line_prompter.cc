// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <iostream>
#include <string>

#include <fmt/format.h>

#include "apps/prompters.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

class LinePrompter final : public Prompter {
 public:
  size_t choose(std::string_view prompt, const std::vector<std::string>& choices, size_t default_index) override {
    std::cout << prompt << "\n";
    for (size_t i = 0; i < choices.size(); ++i) {
      std::cout << fmt::format("  [{}] {}\n", i, choices[i]);
    }
    while (true) {
      std::string answer = trim(readAnswer(fmt::format("Select by number or text [{}]: ", default_index), prompt));
      if (answer.empty()) return default_index;
      if (auto index = parseInt(answer); index && *index >= 0 && static_cast<size_t>(*index) < choices.size()) {
        return static_cast<size_t>(*index);
      }
      for (size_t i = 0; i < choices.size(); ++i) {
        if (toLower(choices[i]) == toLower(answer)) return i;
      }
      say(
          fmt::format("'{}' is not one of the choices; enter a number from 0 to {} or the "
                      "choice's text.",
                      answer, choices.size() - 1));
    }
  }

  std::string readLine(std::string_view prompt) override { return readAnswer(prompt, prompt); }

  void say(std::string_view line) override { std::cout << line << "\n" << std::flush; }

 private:
  std::string readAnswer(std::string_view shown, std::string_view question) {
    std::cout << shown << std::flush;
    std::string line;
    if (!std::getline(std::cin, line)) {
      std::cout << "\n" << std::flush;
      throw Error(fmt::format("input ended before the wizard finished, at \"{}\"; nothing was "
                              "saved",
                              trim(question)),
                  "pipe one answer per line (an empty line takes the default), or run "
                  "`accel config` in a terminal",
                  ExitStatus::Usage);
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::cout << line << "\n" << std::flush;  // a pipe does not echo: keep the transcript whole
    return line;
  }
};

}  // namespace

std::unique_ptr<Prompter> makeLinePrompter() { return std::make_unique<LinePrompter>(); }

std::unique_ptr<Prompter> makePrompter() {
  if (::isatty(0) && ::isatty(1)) return makeTerminalPrompter();
  return makeLinePrompter();
}

}  // namespace accel
