// SPDX-License-Identifier: Apache-2.0
#include "lib/config/asker.h"

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

size_t Asker::menu(std::string_view prompt, const std::vector<std::string>& choices, size_t default_index) {
  return prompter_.choose(prompt, choices, default_index);
}

bool Asker::yesNo(std::string_view prompt, bool default_value) {
  while (true) {
    std::string answer = toLower(trim(prompter_.readLine(prompt)));
    if (answer.empty()) return default_value;
    if (answer == "yes") return true;
    if (answer == "no") return false;
    prompter_.say("Please enter yes or no.");
  }
}

long long Asker::integer(std::string_view prompt, std::optional<long long> default_value, std::string_view error,
                         long long min, long long max) {
  while (true) {
    std::string answer = trim(prompter_.readLine(prompt));
    if (answer.empty() && default_value) return *default_value;
    auto value = parseInt(answer);
    if (value && *value >= min && *value <= max) return *value;
    if (!isIntegerText(answer)) {
      prompter_.say(error);
    } else if (value ? *value < min : answer[0] == '-') {  // no value: digits past long long
      prompter_.say(fmt::format("Please enter an integer of at least {}.", min));
    } else {
      prompter_.say(fmt::format("Please enter an integer of at most {}.", max));
    }
  }
}

double Asker::number(std::string_view prompt, double default_value) {
  while (true) {
    std::string answer = trim(prompter_.readLine(prompt));
    if (answer.empty()) return default_value;
    if (auto value = parseDouble(answer)) return *value;
    prompter_.say("Please enter a number.");
  }
}

std::string Asker::text(std::string_view prompt, std::optional<std::string> default_value, bool required) {
  return checked(prompt, std::move(default_value), [required](const std::string& answer) {
    return required && answer.empty() ? std::string("Please enter a value.") : std::string();
  });
}

std::string Asker::checked(std::string_view prompt, std::optional<std::string> default_value,
                           const std::function<std::string(const std::string&)>& check) {
  while (true) {
    std::string answer = trim(prompter_.readLine(prompt));
    if (answer.empty() && default_value) answer = *default_value;
    std::string problem = check(answer);
    if (problem.empty()) return answer;
    prompter_.say(problem);
  }
}

}  // namespace accel
