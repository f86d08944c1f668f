// SPDX-License-Identifier: Apache-2.0
// `accel env`: the hardware/software report (lib/hardware/env_report.h) plus the config file in
// effect, shown the way Accelerate's `env` shows it (field order, Python-style values).
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/config_file.h"
#include "lib/config/loader.h"
#include "lib/config/schema.h"
#include "lib/hardware/env_report.h"
#include "lib/hardware/env_text.h"

namespace accel {

namespace {

using nlohmann::json;

struct ConfigSection {
  std::string path;
  bool passed = false;  // --config_file was given
  bool found = false;
  Config config;
  std::vector<Diagnostic> errors;
};

ConfigSection loadSection(const ConfigFileOption& file) {
  ConfigSection s;
  s.passed = !file.path.empty();
  s.path = s.passed ? file.path : defaultConfigPath();
  s.found = fileExists(s.path);
  if (s.passed && !s.found) loadConfigFile(s.path);  // throws: a named file must exist
  if (s.found) {
    try {
      LoadResult loaded = parseConfigText(readConfigText(s.path), s.path);
      s.config = std::move(loaded.config);
      s.errors = std::move(loaded.errors);
      s.errors.insert(s.errors.end(), loaded.problems.begin(), loaded.problems.end());
    } catch (const ConfigError& e) {  // a directory, too large: the report says so and goes on
      s.errors = e.diagnostics();
    }
  }
  return s;
}

// Resolved top-level values in Accelerate's field order, without nulls and empty maps.
std::vector<std::pair<std::string, json>> shownValues(const Config& c) {
  std::vector<std::pair<std::string, json>> out;
  for (const auto& key : childKeys("")) {
    json v = c.resolved(key);
    if (v.is_null() || (v.is_object() && v.empty())) continue;
    out.emplace_back(key, v);
  }
  return out;
}

// Python's repr of the value as Accelerate's env prints it (top-level strings bare).
std::string pythonRepr(const json& v, bool top = false) {
  switch (v.type()) {
    case json::value_t::null: return "None";
    case json::value_t::boolean: return v.get<bool>() ? "True" : "False";
    case json::value_t::number_float: return pythonFloatRepr(v.get<double>());
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (top) return s;
      std::string quoted = "'";
      for (char c : s) quoted += c == '\'' ? std::string("\\'") : std::string(1, c);
      return quoted + "'";
    }
    case json::value_t::array: {
      std::vector<std::string> items;
      for (const auto& item : v) items.push_back(pythonRepr(item));
      return "[" + join(items, ", ") + "]";
    }
    case json::value_t::object: {
      std::vector<std::string> items;
      for (const auto& [k, item] : v.items()) items.push_back("'" + k + "': " + pythonRepr(item));
      return "{" + join(items, ", ") + "}";
    }
    default: return v.dump();
  }
}

std::string configText(const ConfigSection& s) {
  std::string out = fmt::format("- `accel` {}: {}\n", s.passed ? "config passed" : "default config", s.path);
  if (!s.found) return out + "\tNot found\n";
  for (const auto& d : s.errors) out += "\tinvalid: " + formatDiagnostic(d) + "\n";
  if (!s.errors.empty()) return out;
  for (const auto& [key, value] : shownValues(s.config)) {
    out += "\t- " + key + ": " + pythonRepr(value, true) + "\n";
  }
  return out;
}

json configJson(const ConfigSection& s) {
  json values = json::object();
  json errors = json::array();
  for (const auto& d : s.errors) errors.push_back(formatDiagnostic(d));
  if (s.errors.empty()) {
    for (const auto& [key, value] : shownValues(s.config)) values[key] = value;
  }
  return {{"path", s.path},
          {"passed", s.passed},
          {"found", s.found},
          {"values", s.found && s.errors.empty() ? values : json()},
          {"errors", errors}};
}

}  // namespace

int runEnv(const ConfigFileOption& file, bool as_json) {
  ConfigSection config = loadSection(file);
  EnvReport report = collectEnvReport();
  if (as_json) {
    json out = envReportJson(report);
    out["config"] = configJson(config);
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "\nCopy-and-paste the text below in your GitHub issue\n\n"
              << envReportText(report) << configText(config);
  }
  std::cout << std::flush;
  if (!config.errors.empty()) throw ConfigError(config.errors);  // the report is still printed
  return 0;
}

}  // namespace accel
