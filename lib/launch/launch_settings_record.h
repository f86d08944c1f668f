// SPDX-License-Identifier: Apache-2.0
// The resolved settings of a launch (LaunchSettings: a value and its origin per name) and the
// questions asked of them; launch_settings.h resolves them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/config/schema.h"

namespace accel {

struct Setting {
  nlohmann::json value;  // null: unset
  std::string origin;    // "command line", "config file", "SLURM", "GPU probe", "environment", "default"
};

class LaunchSettings {
 public:
  const nlohmann::json& value(const std::string& name) const;
  const std::string& origin(const std::string& name) const;
  long long integer(const std::string& name) const;
  std::string text(const std::string& name) const;
  bool flag(const std::string& name) const;
  bool has(const std::string& name) const;
  void set(const std::string& name, nlohmann::json value, std::string origin);
  const std::map<std::string, Setting>& all() const { return items_; }

  std::optional<std::string> config_path;  // the file read, if any
  std::string config_line;                 // one line: which config file, or which defaults
  std::vector<std::string> notes;          // SLURM detection, ignored keys, …

 private:
  std::map<std::string, Setting> items_;
};

// Whether settings under `when` apply to this launch: paradigm settings only under their
// paradigm (their launch defaults and their worker variables), FP8 ones with mixed_precision fp8.
bool exportApplies(ExportWhen when, const LaunchSettings& s);

// True for distributed types whose workers use GPUs.
bool isGpuType(const std::string& distributed_type);

}  // namespace accel
