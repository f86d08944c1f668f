// SPDX-License-Identifier: Apache-2.0
// Typed questions on top of a Prompter, with Accelerate's conventions: an empty answer takes
// the default, yes/no fields take only yes or no, a bad answer is explained and asked again.
#pragma once

#include <climits>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/config/prompter.h"

namespace accel {

class Asker {
 public:
  explicit Asker(Prompter& prompter) : prompter_(prompter) {}

  size_t menu(std::string_view prompt, const std::vector<std::string>& choices, size_t default_index = 0);
  bool yesNo(std::string_view prompt, bool default_value);
  // An integer in [min, max]; `error` is printed on a bad answer (Accelerate's wording).
  long long integer(std::string_view prompt, std::optional<long long> default_value,
                    std::string_view error = "Please enter an integer.", long long min = LLONG_MIN,
                    long long max = LLONG_MAX);
  double number(std::string_view prompt, double default_value);
  // Free text. With a default, an empty answer takes it; without one, an empty answer is
  // accepted unless `required`.
  std::string text(std::string_view prompt, std::optional<std::string> default_value = {}, bool required = false);
  // Free text checked by `check`, which returns an error message ("" when the answer is good).
  std::string checked(std::string_view prompt, std::optional<std::string> default_value,
                      const std::function<std::string(const std::string&)>& check);
  void say(std::string_view line) { prompter_.say(line); }

 private:
  Prompter& prompter_;
};

}  // namespace accel
