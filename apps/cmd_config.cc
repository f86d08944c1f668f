// SPDX-License-Identifier: Apache-2.0
// `accel config`, `config default|update|show|validate`.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/prompters.h"
#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/loader.h"
#include "lib/config/schema.h"
#include "lib/config/validate.h"
#include "lib/config/wizard.h"
#include "lib/config/writer.h"
#include "lib/hardware/gpu_probe.h"

namespace accel {

namespace {

using nlohmann::json;

std::string targetPath(const ConfigFileOption& file) { return file.path.empty() ? defaultConfigPath() : file.path; }

void printNotes(const std::vector<std::string>& notes) {
  for (const auto& note : notes) std::cerr << "accel: note: " << note << "\n";
}

void checkMixedPrecision(const std::string& value) {
  const auto& spec = keySpec("mixed_precision");
  std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return;
  std::string hint = "allowed values: " + join(choices, ", ");
  if (auto guess = didYouMean(value, choices)) hint = fmt::format("did you mean '{}'? ", *guess) + hint;
  throw UsageError(fmt::format("--mixed_precision: '{}' is not a valid precision", value), hint);
}

// A value and where it came from, for `config show`.
struct Shown {
  std::string key;
  json value;
  std::string source;  // "file", "default", "unset"
  int line = 0;
};

std::vector<Shown> showRows(const Config& c) {
  std::vector<Shown> rows;
  auto add = [&](const std::string& key) {
    auto mark = c.marks.find(key);
    if (const json* v = c.find(key)) {
      rows.push_back({key, *v, "file", mark == c.marks.end() ? 0 : mark->second.line});
    } else if (json d = c.resolved(key); !d.is_null()) {
      rows.push_back({key, d, "default"});
    } else {
      rows.push_back({key, nullptr, "unset"});
    }
  };
  for (const auto& spec : configSchema()) {
    const std::string path(spec.path);
    const bool nested = path.find('.') != std::string::npos;
    if (!nested && !inSection(spec, c.sageMaker())) continue;
    if (spec.type == ValueType::Map) {
      // Keys a map accepts without a schema row (megatron_lm_*, parallelism_config_*).
      if (const json* map = c.find(path)) {
        for (const auto& [k, v] : map->items()) {
          if (!findKey(path + "." + k)) add(path + "." + k);
        }
      }
    } else if (!nested || c.find(path)) {
      add(path);
    }
  }
  return rows;
}

std::string displayValue(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

void printWarnings(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    std::cerr << "accel: warning: " << formatDiagnostic(d) << "\n";
    if (!d.hint.empty()) std::cerr << "accel: hint: " << d.hint << "\n";
  }
}

void printFindings(const LoadResult& loaded) {
  printWarnings(loaded.warnings);
  std::vector<Diagnostic> problems = loaded.problems;
  for (auto& d : problems)
    d.message += " (Accelerate reads the file, but no launch can use this value: accel launch refuses it)";
  printWarnings(problems);
}

int runConfigWizard(const ConfigFileOption& file) {
  const std::string path = targetPath(file);
  auto prompter = makePrompter();
  json values = runConfigWizard(*prompter, static_cast<int>(probeGpus().devices.size()));
  Config check{path, values, {}};
  if (auto problems = checkConsistency(check); !problems.empty()) throw ConfigError(problems);
  saveConfig(values, path, /*create_parents=*/true);
  std::cout << "accel configuration saved at " << path << "\n";
  return 0;
}

int runConfigDefault(const ConfigFileOption& file, const std::string& mixed_precision, bool force) {
  checkMixedPrecision(mixed_precision);
  const std::string path = targetPath(file);
  if (fileExists(path) && !force) {
    std::cout << "Configuration already exists at " << path
              << ", will not override. Run `accel config` to change it, or pass --force to "
                 "replace it.\n";
    return 0;
  }
  const GpuReport probe = probeGpus();
  const int gpus = static_cast<int>(probe.devices.size());
  json values = json::object();
  for (const auto& spec : configSchema()) {  // every top-level key Accelerate writes here
    if (spec.path.find('.') == std::string_view::npos && !spec.file_default.empty() && inSection(spec, false)) {
      values[std::string(spec.path)] = fileDefault(spec);
    }
  }
  values["distributed_type"] = gpus > 1 ? "MULTI_GPU" : "NO";
  values["num_processes"] = std::max(gpus, 1);
  values["use_cpu"] = gpus == 0;
  values["mixed_precision"] = mixed_precision;
  for (const auto& warning : probe.warnings) std::cerr << "accel: warning: " << warning << "\n";
  if (gpus > 0) {
    std::cout << fmt::format("found {} GPU(s) ({})\n", gpus, probe.source);
  } else if (probe.source.empty()) {
    std::cout << fmt::format("no GPU found ({}); configuring one CPU process\n", probe.unavailable_reason);
  } else {
    std::cout << "no GPU visible (CUDA_VISIBLE_DEVICES); configuring one CPU process\n";
  }
  saveConfig(values, path, /*create_parents=*/true);
  std::cout << "accel configuration saved at " << path << "\n";
  return 0;
}

int runConfigUpdate(const ConfigFileOption& file) {
  const std::string path = targetPath(file);
  LoadResult loaded = loadConfigFile(path);
  Config& c = loaded.config;
  for (const auto& spec : configSchema()) {  // fill what Accelerate's dataclass would
    if (spec.path.find('.') == std::string_view::npos && inSection(spec, c.sageMaker()) && !c.find(spec.path)) {
      if (json d = fileDefault(spec, c.sageMaker()); !d.is_null()) c.set(spec.path, d);
    }
  }
  if (c.resolved("distributed_type") == "NO" && !c.find("num_processes") && !c.sageMaker()) c.set("num_processes", 1);
  saveConfig(c.values, path);
  printNotes(loaded.notes);
  printFindings(loaded);
  std::cout << "Successfully updated the configuration file at " << path << ".\n";
  return 0;
}

int runConfigShow(const ConfigFileOption& file, bool as_json) {
  const std::string path = targetPath(file);
  LoadResult loaded;
  const bool found = !file.path.empty() || fileExists(path);
  if (found) loaded = loadConfigFile(path);  // an explicit path that is missing fails here
  const Config& config = loaded.config;
  const std::vector<std::string>& notes = loaded.notes;
  std::vector<Shown> rows = showRows(config);
  if (as_json) {
    json out = {{"config_file", found ? json(path) : json(nullptr)}, {"values", json::object()}};
    for (const auto& r : rows) {
      json entry = {{"value", r.value}, {"source", r.source}};
      if (r.line) entry["line"] = r.line;
      out["values"][r.key] = entry;
    }
    std::cout << out.dump(2) << "\n";
    printNotes(notes);
    printFindings(loaded);
    return 0;
  }
  std::cout << (found ? "config file: " + path
                      : "config file: none (no file at " + path + "; showing defaults; create one with `accel config`)")
            << "\n";
  size_t key_width = 3, value_width = 5;
  for (const auto& r : rows) {
    key_width = std::max(key_width, r.key.size());
    value_width = std::max(value_width, displayValue(r.value).size());
  }
  std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", "key", key_width, "value", value_width, "source");
  for (const auto& r : rows) {
    std::string source = r.line ? fmt::format("file, line {}", r.line) : r.source;
    std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", r.key, key_width, displayValue(r.value), value_width, source);
  }
  printNotes(notes);
  printFindings(loaded);
  return 0;
}

int runConfigValidate(const std::vector<std::string>& files) {
  std::vector<Diagnostic> all;
  for (const auto& path : files) {
    try {
      LoadResult loaded = loadConfigFile(path);
      printNotes(loaded.notes);
      printWarnings(loaded.warnings);
      all.insert(all.end(), loaded.problems.begin(), loaded.problems.end());
      auto sizes = checkParallelismSizes(loaded.config);
      all.insert(all.end(), sizes.begin(), sizes.end());
      if (loaded.problems.empty() && sizes.empty()) std::cout << path << ": ok\n";
    } catch (const ConfigError& e) {
      all.insert(all.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!all.empty()) throw ConfigError(all);
  return 0;
}

}  // namespace accel
