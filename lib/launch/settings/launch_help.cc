// SPDX-License-Identifier: Apache-2.0
// `accel launch --help` (launch_help.h).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/config/schema.h"
#include "lib/launch/settings/launch_help.h"
#include "lib/launch/settings/launcher_flag_table.h"

namespace accel::launch::settings {

namespace {

struct Line {
  std::string left, help;
};

// Config-key flags are grouped by the section of the file they set.
std::string keyGroup(std::string_view path) {
  auto dot = path.find('.');
  if (dot == std::string_view::npos) return "Resources (config keys)";
  return fmt::format("Paradigm settings ({})", path.substr(0, dot));
}

std::string rowHelp(const LauncherFlag& row) {
  return row.refused.empty() ? std::string(row.help) : fmt::format("{}: refused ({})", row.help, row.refused);
}

std::string rowLeft(const LauncherFlag& row) {
  return (row.short_name.empty() ? "" : fmt::format("-{}, ", row.short_name)) +
         fmt::format("--{}{}", row.name, isSwitch(row) ? "" : " VALUE");
}

std::string keyHelp(const KeySpec& spec) {
  std::string help = fmt::format("{} [config: {}]", spec.help, spec.path);
  if (spec.type == ValueType::Enum && !spec.is_switch) help += "; " + describeType(spec);
  return help;
}

// Whether a flag's value names a file or a folder, from its name: every such flag says so
// (config_file, hostfile, deepspeed_config_file, log_dir, the NVMe paths).
LaunchFlagDoc::Value valueKind(std::string_view name) {
  if (name.find("file") != std::string_view::npos) return LaunchFlagDoc::Value::File;
  if (name.ends_with("_dir") || name.ends_with("_path")) return LaunchFlagDoc::Value::Folder;
  return LaunchFlagDoc::Value::Any;
}

std::vector<std::string> spellingsOf(std::string_view name, std::string_view short_name = {}) {
  std::vector<std::string> out = {"--" + std::string(name)};
  if (dashed(name) != name) out.push_back("--" + dashed(name));
  if (!short_name.empty()) out.push_back("-" + std::string(short_name));
  return out;
}

// The words a config key's flag takes where they are few: its choices, true/false, or a small
// integer range (--zero_stage 0 to 3).
std::vector<std::string> keyChoices(const KeySpec& spec) {
  std::vector<std::string> out;
  if (spec.is_switch) return out;
  if (spec.type == ValueType::Enum) {
    for (auto c : spec.choices) out.emplace_back(c);
  } else if (spec.type == ValueType::Bool) {
    out = {"true", "false"};
  } else if (spec.type == ValueType::Int && spec.min != LLONG_MIN && spec.max - spec.min <= 8) {
    for (long long v = spec.min; v <= spec.max; ++v) out.push_back(std::to_string(v));
  }
  return out;
}

bool torchrunKey(std::string_view flag) {
  return std::find(std::begin(kTorchrunConfigFlags), std::end(kTorchrunConfigFlags), flag) !=
         std::end(kTorchrunConfigFlags);
}

}  // namespace

std::vector<LaunchFlagDoc> launchFlagDocs(Grammar grammar) {
  const bool torchrun = grammar == Grammar::Torchrun;
  std::vector<LaunchFlagDoc> out;
  for (const auto& row : launcherFlags()) {
    if (torchrun && !row.torchrun) continue;
    LaunchFlagDoc d{spellingsOf(row.name, row.short_name),
                    !isSwitch(row),
                    {},
                    valueKind(row.name),
                    std::string(row.group),
                    rowHelp(row)};
    for (auto c : row.choices) d.choices.emplace_back(c);
    out.push_back(std::move(d));
  }
  for (const auto& spec : configSchema()) {
    if (spec.flag.empty() || (torchrun && !torchrunKey(spec.flag))) continue;
    out.push_back({spellingsOf(spec.flag), !spec.is_switch, keyChoices(spec), valueKind(spec.flag), keyGroup(spec.path),
                   keyHelp(spec)});
  }
  return out;
}

std::string launchHelp() {
  std::vector<std::pair<std::string, std::vector<Line>>> groups;  // in first-seen order
  auto add = [&](const std::string& group, Line line) {
    for (auto& [name, lines] : groups) {
      if (name == group) return lines.push_back(std::move(line));
    }
    groups.push_back({group, {std::move(line)}});
  };
  for (const auto& row : launcherFlags()) {
    if (row.unsupported.empty() && row.group != kLauncherGroup) {
      add(std::string(row.group),
          {row.group == kTorchrunGroup ? rowLeft(row) : fmt::format("--{}", row.name), rowHelp(row)});
    }
  }
  for (const auto& spec : configSchema()) {
    if (spec.flag.empty()) continue;
    add(keyGroup(spec.path), {fmt::format("--{}{}", spec.flag, spec.is_switch ? "" : " VALUE"), keyHelp(spec)});
  }
  for (const auto& row : launcherFlags()) {
    if (!row.unsupported.empty() || row.group != kLauncherGroup) continue;
    add(std::string(kLauncherGroup), {rowLeft(row), rowHelp(row)});
  }
  std::string unsupported;
  for (const auto& row : launcherFlags()) {
    if (!row.unsupported.empty()) unsupported += fmt::format("{}--{}", unsupported.empty() ? "" : ", ", row.name);
  }
  std::string out =
      "accel launch: start one worker per GPU (or CPU process) and supervise them\n"
      "Usage: accel launch [OPTIONS] PROGRAM [ARGS...]\n\n"
      "Every option also has a dashed spelling (--num-processes); --name=VALUE works too.\n";
  for (const auto& [group, lines] : groups) {
    out += "\n" + group + ":\n";
    for (const auto& line : lines) out += fmt::format("  {:<44} {}\n", line.left, line.help);
  }
  out += "\nAccepted only to say that accel does not launch TPU pods or SageMaker jobs: " + unsupported + ".\n";
  out +=
      "\nPROGRAM [ARGS...]: an executable (found on PATH), a .py script (run with python3 -u), or a module with -m. "
      "Everything after PROGRAM is passed to it unchanged.\n";
  return out;
}

std::string torchrunHelp() {
  std::string out =
      "accel torchrun: torchrun's command line (torchrun 2.15's flags, grammar and defaults; no Accelerate config "
      "file)\n"
      "Usage: accel torchrun [OPTIONS] PROGRAM [ARGS...]   (or through a link named torchrun)\n\n"
      "Every option also has its other spelling (--nproc-per-node), and its default from PET_<NAME> "
      "(PET_NPROC_PER_NODE) where torchrun reads one.\n\n";
  for (const auto& row : launcherFlags()) {
    if (!row.torchrun) continue;
    // torchrun's --tee adds log files; what reaches the console is every stream -r leaves.
    const std::string help = row.name == "tee" ? "streams also written to --log_dir files, as torchrun's: 0-3 or "
                                                 "LOCAL_RANK:N,… (every stream --redirects leaves reaches the console)"
                                               : rowHelp(row);
    out += fmt::format("  {:<44} {}\n", rowLeft(row), help);
  }
  out +=
      fmt::format("  {:<44} {}\n", "--rdzv_backend VALUE",
                  "static (default) or c10d: both meet at machine 0 (--rdzv_endpoint or --master_addr:--master_port)");
  return out;
}

}  // namespace accel::launch::settings
