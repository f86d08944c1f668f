// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/launch_args.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/schema.h"
#include "lib/launch/settings/launcher_flag_table.h"

namespace accel::launch::settings {

namespace {

// What one spelling ("--zero_stage", "--zero-stage", "-t") stands for: a launcher row or a
// config-key row.
struct FlagRef {
  const LauncherFlag* launcher = nullptr;
  const KeySpec* key = nullptr;
  std::string_view name() const { return launcher ? launcher->name : key->flag; }
  bool isSwitch() const { return key ? key->is_switch : settings::isSwitch(*launcher); }
};

using FlagIndex = std::unordered_map<std::string, FlagRef>;

FlagIndex buildIndex(bool torchrun) {
  FlagIndex out;
  auto add = [&](std::string_view name, FlagRef ref) {
    out.emplace("--" + std::string(name), ref);
    out.emplace("--" + dashed(name), ref);
  };
  for (const auto& row : launcherFlags()) {
    if (torchrun && !row.torchrun) continue;
    add(row.name, {.launcher = &row});
    if (!row.short_name.empty()) out.emplace("-" + std::string(row.short_name), FlagRef{.launcher = &row});
  }
  for (const auto& spec : configSchema()) {
    const bool torchruns = std::find(std::begin(kTorchrunConfigFlags), std::end(kTorchrunConfigFlags), spec.flag) !=
                           std::end(kTorchrunConfigFlags);
    if (!spec.flag.empty() && (!torchrun || torchruns)) add(spec.flag, {.key = &spec});
  }
  return out;
}

// `accel launch`'s spellings, or only torchrun's (`accel torchrun`).
const FlagIndex& flagIndex(Grammar grammar) {
  if (grammar == Grammar::Torchrun) {
    static const FlagIndex torchrun = buildIndex(true);  // built only when used
    return torchrun;
  }
  static const FlagIndex launch = buildIndex(false);
  return launch;
}

const char* commandName(Grammar grammar) { return grammar == Grammar::Torchrun ? "accel torchrun" : "accel launch"; }

[[noreturn]] void unknownFlag(const std::string& word, Grammar grammar) {
  std::vector<std::string> names;
  for (const auto& [spelling, ref] : flagIndex(grammar)) names.push_back(spelling);
  auto guess = didYouMean(word, names);
  const std::string command = commandName(grammar);
  std::string hint = guess ? "did you mean '" + *guess + "'?" : "run `" + command + " --help` to list the options";
  if (grammar == Grammar::Torchrun && flagIndex(Grammar::Launch).count(word)) {
    hint = word + " is `accel launch`'s (Accelerate's), not torchrun's: use `accel launch`";
  }
  throw UsageError(fmt::format("{}: unknown option '{}'", command, word), hint);
}

// torchrun's argparse takes an unambiguous prefix of a long option (allow_abbrev): --nproc.
FlagIndex::const_iterator abbreviated(const std::string& word, Grammar grammar) {
  const FlagIndex& index = flagIndex(grammar);
  if (grammar != Grammar::Torchrun || !startsWith(word, "--")) return index.end();
  auto found = index.end();
  std::vector<std::string> matches;
  for (auto it = index.begin(); it != index.end(); ++it) {
    if (!startsWith(it->first, word)) continue;
    if (found == index.end() || found->second.name() != it->second.name()) matches.push_back(it->first);
    found = it;
  }
  if (matches.size() > 1) {
    std::sort(matches.begin(), matches.end());
    throw UsageError(fmt::format("accel torchrun: ambiguous option: {} could match {}", word, join(matches, ", ")),
                     "spell the option out");
  }
  return found;
}

long long integerOrFail(const LauncherFlag& row, const std::string& text) {
  if (const std::string why = whyNotInteger(text, row.min, row.max); !why.empty()) {
    throw UsageError(fmt::format("--{}: {}", row.name, why));
  }
  return *parseInt(text);
}

double numberOrFail(const std::string& flag, const std::string& text) {
  auto value = parseDouble(text);
  if (!value) throw UsageError(fmt::format("--{}: '{}' is not a number", flag, text));
  return *value;
}

// Stores a launcher flag's value in the LaunchOptions field its row names.
void apply(const LauncherFlag& row, const std::string& text, LaunchOptions& o) {
  const std::string flag(row.name);
  std::visit(
      [&](auto field) {
        using Field = std::remove_reference_t<decltype(o.*field)>;
        if constexpr (std::is_same_v<Field, bool>) {
          o.*field = true;
        } else if constexpr (std::is_same_v<Field, std::optional<long long>>) {
          o.*field = integerOrFail(row, text);
        } else if constexpr (std::is_same_v<Field, std::optional<double>>) {
          o.*field = numberOrFail(flag, text);
        } else if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
          (o.*field).push_back(text);
        } else {
          o.*field = text;
        }
      },
      row.field);
}

void checkEnvAssignment(const std::string& text) {
  auto eq = text.find('=');
  bool name_ok = eq != std::string::npos && eq > 0 && !std::isdigit(static_cast<unsigned char>(text[0])) &&
                 std::all_of(text.begin(), text.begin() + static_cast<long>(eq),
                             [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (!name_ok) {
    throw UsageError(fmt::format("--env: '{}' is not KEY=VALUE", text),
                     "give one variable per --env, e.g. --env NCCL_DEBUG=INFO");
  }
}

// The TPU and SageMaker flags, and the torchrun flags accel has no counterpart for, fail as soon
// as they are seen, whatever follows them.
void refuseUnsupported(const FlagRef& ref) {
  if (ref.launcher && !ref.launcher->refused.empty()) {
    throw UsageError(fmt::format("--{} ({}) is torchrun's, and accel has none", ref.launcher->name, ref.launcher->help),
                     std::string(ref.launcher->refused));
  }
  if (ref.launcher && !ref.launcher->unsupported.empty()) {
    throw UsageError(
        fmt::format("--{} is for {} launches, which accel does not do", ref.launcher->name, ref.launcher->help),
        "accel launches NVIDIA GPU and CPU jobs; drop the flag");
  }
}

void applyFlag(const FlagRef& ref, const std::string& text, LaunchOptions& o) {
  if (ref.key) {
    o.values[std::string(ref.key->path)] =
        typedFlagValue(std::string(ref.key->path), ref.key->is_switch ? "true" : text);
    return;
  }
  if (ref.launcher->name == "env") checkEnvAssignment(text);
  apply(*ref.launcher, text, o);
}

}  // namespace

void applyLauncherFlag(const LauncherFlag& row, const std::string& text, LaunchOptions& o) { apply(row, text, o); }

LaunchOptions parseLaunchArgs(const std::vector<std::string>& words, Grammar grammar) {
  LaunchOptions o;
  o.words = words;
  o.torchrun = grammar == Grammar::Torchrun;
  const FlagIndex& index = flagIndex(grammar);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      o.command.assign(words.begin() + static_cast<long>(i) + 1, words.end());
      break;
    }
    if (word.size() < 2 || word[0] != '-') {  // the program: it and everything after are its own
      o.command.assign(words.begin() + static_cast<long>(i), words.end());
      break;
    }
    const size_t eq = startsWith(word, "--") ? word.find('=') : std::string::npos;
    // argparse's attached short value: -r3 is -r 3.
    const bool attached = !startsWith(word, "--") && word.size() > 2 && index.count(word.substr(0, 2)) &&
                          !index.at(word.substr(0, 2)).isSwitch();
    const std::string spelling = attached ? word.substr(0, 2) : word.substr(0, eq);
    auto it = index.find(spelling);
    if (it == index.end()) it = abbreviated(spelling, grammar);
    if (it == index.end()) unknownFlag(spelling, grammar);
    const FlagRef& ref = it->second;
    refuseUnsupported(ref);
    std::string value;
    if (ref.isSwitch()) {
      if (eq != std::string::npos) throw UsageError(fmt::format("{} takes no value (got '{}')", spelling, word));
    } else if (attached) {
      value = word.substr(2);
    } else if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else if (i + 1 < words.size() && !startsWith(words[i + 1], "--")) {
      value = words[++i];
    } else {
      throw UsageError(fmt::format("{} needs a value", spelling),
                       fmt::format("run `{} --help` for usage", commandName(grammar)));
    }
    applyFlag(ref, value, o);
  }
  return o;
}

std::vector<std::string> launchFlagNames() {
  std::vector<std::string> names;
  for (const auto& row : launcherFlags()) names.emplace_back(row.name);
  for (const auto& spec : configSchema()) {
    if (!spec.flag.empty()) names.emplace_back(spec.flag);
  }
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json typedFlagValue(const std::string& key, const std::string& text) {
  const KeySpec& spec = keySpec(key);
  const std::string flag = "--" + std::string(spec.flag.empty() ? spec.path : spec.flag);
  auto fail = [&](std::string hint = {}) -> nlohmann::json {
    throw UsageError(fmt::format("{}: '{}' is not {}", flag, text, describeType(spec)), hint);
  };
  auto boolean = [](const std::string& word) -> std::optional<bool> {
    std::string t = toLower(word);
    if (t == "true" || t == "yes" || t == "1" || t == "on") return true;
    if (t == "false" || t == "no" || t == "0" || t == "off") return false;
    return std::nullopt;
  };
  switch (spec.type) {
    case ValueType::Bool: {
      auto v = boolean(text);
      return v ? nlohmann::json(*v) : fail();
    }
    case ValueType::Int: {
      auto v = parseInt(text);
      // No value: not an integer, or digits past long long, which are out of range, not "not an integer".
      if (!v) throw UsageError(fmt::format("{}: {}", flag, whyNotInteger(text, spec.min, spec.max)));
      return *v >= spec.min && *v <= spec.max ? nlohmann::json(*v) : fail();
    }
    case ValueType::Float: {
      auto v = parseDouble(text);
      return v ? nlohmann::json(*v) : fail();
    }
    case ValueType::Enum: {
      std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
      for (const auto& c : choices) {
        if (c == text || (spec.fold_case && toUpper(c) == toUpper(text))) return c;
      }
      auto guess = didYouMean(text, choices);
      return fail(guess ? "did you mean '" + *guess + "'?" : "");
    }
    case ValueType::List: {  // "true,false,false", as Accelerate's --fp8_override_linear_precision
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : split(text, ',')) {
        auto v = boolean(item);
        list.push_back(v ? nlohmann::json(*v) : nlohmann::json(item));
      }
      return list;
    }
    default: return text;
  }
}

}  // namespace accel::launch::settings
