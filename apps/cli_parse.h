// SPDX-License-Identifier: Apache-2.0
// How accel's helper programs (accel-train, accel-bench) parse their command lines with CLI11,
// in `accel`'s style: --help prints and exits 0; a bad command line prints "PROGRAM: error: WHAT"
// and "PROGRAM: hint: run `PROGRAM --help` for usage", and exits 2 (usage error), as `accel`
// does. Header-only: each program is one translation unit that includes CLI11.
#pragma once

#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

// An option given twice takes its last value, as argparse (Accelerate) and the programs' earlier
// parsers do: scripts append overrides to a base command line. Call before adding options.
inline void lastValueWins(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// "--name,--name-with-dashes": Accelerate's underscore spelling and the dashed one.
inline std::string flagSpellings(const std::string& name) {
  const std::string dashes = dashed(name);
  return dashes == name ? "--" + name : "--" + name + ",--" + dashes;
}

// Checks with accel's wording ("'x' is not an integer", whyNotInteger), where CLI11's own validators would
// print a range of 300 digits.
inline CLI::Validator wholeNumberAtLeast(long long min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        auto n = parseInt(text);
        if (!n) return whyNotInteger(text, min);
        return *n < min ? fmt::format("must be at least {} (got {})", min, *n) : "";
      },
      "");
}

inline CLI::Validator number(bool positive = false) {
  return CLI::Validator(
      [positive](std::string& text) -> std::string {
        auto v = parseDouble(text);
        if (!v) return "'" + text + "' is not a number";
        return positive && !(*v > 0) ? "must be more than 0 (got " + text + ")" : "";
      },
      "");
}

[[noreturn]] inline void exitWithUsageError(const CLI::App& app, const std::string& what) {
  const std::string program = app.get_name();
  std::cerr << program << ": error: " << what << "\n"
            << program << ": hint: run `" << program << " --help` for usage\n";
  std::exit(static_cast<int>(ExitStatus::Usage));
}

inline void parseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    exitWithUsageError(app, e.what());
  }
}

}  // namespace accel
