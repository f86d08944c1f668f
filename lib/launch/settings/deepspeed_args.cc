// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/deepspeed_args.h"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel::launch::settings {

namespace {

using A = DeepSpeedArgs;
using Field = std::variant<bool A::*, std::string A::*, long long A::*, std::optional<std::string> A::*,
                           std::optional<long long> A::*>;

struct Row {
  std::string_view name;   // long, underscore spelling
  std::string_view alias;  // a second long name, or ""
  char short_name;         // 0 for none
  Field field;
  std::string_view help;
  std::vector<std::string_view> choices = {};
};

// runner.py's parse_args, in its order.
const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {"hostfile", "", 'H', &A::hostfile, "MPI-style hostfile (`HOST slots=N` lines); default /job/hostfile"},
      {"include", "", 'i', &A::include, "hosts and slots to use: NAME[:SLOT[,SLOT...]][@NAME...]"},
      {"exclude", "", 'e', &A::exclude, "hosts and slots to leave out, as --include"},
      {"num_nodes", "", 0, &A::num_nodes, "use the first N hosts of the hostfile"},
      {"num_gpus", "num_accelerators", 0, &A::num_gpus, "use GPUs 0..N-1 of every host"},
      {"master_port", "", 0, &A::master_port, "rank 0's port (default 29500)"},
      {"master_addr", "", 0, &A::master_addr, "rank 0's address (default: the first host)"},
      {"node_rank", "", 0, &A::node_rank, "this node's index in the hostfile, with --no_ssh"},
      {"launcher", "", 0, &A::launcher, "pdsh, openmpi, mvapich, mpich, impi or slurm (default pdsh)"},
      {"launcher_args", "", 0, &A::launcher_args, "more arguments for the launcher, as one quoted string"},
      {"module", "", 0, &A::module, "run the script as a module (python -m)"},
      {"no_python", "", 0, &A::no_python, "run the script directly, not through python"},
      {"no_local_rank", "", 0, &A::no_local_rank, "do not append --local_rank=N to the script's arguments"},
      {"no_ssh", "", 0, &A::no_ssh, "run on this node only, as node --node_rank (run it on every node)"},
      {"no_ssh_check", "", 0, &A::no_ssh_check, "skip the check that the first host answers ssh"},
      {"force_multi", "", 0, &A::force_multi, "start the hosts through the launcher even for one host"},
      {"save_pid", "", 0, &A::save_pid, "write the launcher's pid to /tmp/PID.deepspeed"},
      {"enable_each_rank_log", "", 0, &A::enable_each_rank_log, "write each rank's output to a file in this folder"},
      {"autotuning", "", 0, &A::autotuning, "DeepSpeed's autotuner (refused by accel)", {"tune", "run"}},
      {"bind_cores_to_rank", "", 0, &A::bind_cores_to_rank, "pin each rank to its own share of the cores"},
      {"bind_core_list", "", 0, &A::bind_core_list, "the cores to share out, e.g. 1,3-5,7"},
      {"ssh_port", "", 0, &A::ssh_port, "ssh's port on the hosts"},
      {"venv_script", "", 0, &A::venv_script, "a script each host sources before the launch (pdsh)"},
      {"log_level",
       "",
       0,
       &A::log_level,
       "the launcher's messages: debug, info, warning, error, critical",
       {"debug", "info", "warning", "error", "critical"}},
      {"quiet", "", 'q', &A::quiet, "the launcher's errors only (--log_level error)"},
  };
  return table;
}

bool isSwitch(const Row& r) { return std::holds_alternative<bool A::*>(r.field); }

// argparse's test of whether a word is an option (then it cannot be a value): a dash first, and
// neither a negative number nor a word with a space ("-x Y", a --launcher_args value, is a value).
bool looksLikeOption(const std::string& w) {
  if (w.size() < 2 || w[0] != '-' || w.find(' ') != std::string::npos) return false;
  return !parseInt(w).has_value();
}

std::string dashed(std::string_view name) { return "--" + std::string(name); }

// argparse's lookup of a long option: exact, else the one option that the word begins.
// nullptr: --help (or a prefix only it has).
const Row* findLong(const std::string& spelling) {
  std::vector<std::pair<std::string, const Row*>> matches;
  for (const auto& r : rows()) {
    for (std::string_view n : {r.name, r.alias}) {
      if (n.empty()) continue;
      const std::string full = dashed(n);
      if (full == spelling) return &r;
      if (full.rfind(spelling, 0) == 0) matches.emplace_back(full, &r);
    }
  }
  if (spelling == "--help") return nullptr;
  if (std::string("--help").rfind(spelling, 0) == 0) matches.emplace_back("--help", nullptr);
  if (matches.size() == 1) return matches.front().second;
  if (matches.size() > 1) {
    std::vector<std::string> names;
    for (const auto& m : matches) names.push_back(m.first);
    throw UsageError(fmt::format("ambiguous option: {} could match {}", spelling, join(names, ", ")),
                     "spell the option out (`accel deepspeed --help` lists them)");
  }
  throw UsageError(fmt::format("unrecognized arguments: {}", spelling),
                   "`accel deepspeed --help` lists DeepSpeed 0.19's launcher flags");
}

void store(const Row& r, const std::string& value, A& a) {
  const std::string flag = dashed(r.name);
  if (!r.choices.empty() && std::find(r.choices.begin(), r.choices.end(), value) == r.choices.end()) {
    std::vector<std::string> quoted;
    for (auto c : r.choices) quoted.push_back(fmt::format("'{}'", c));
    throw UsageError(
        fmt::format("argument {}: invalid choice: '{}' (choose from {})", flag, value, join(quoted, ", ")));
  }
  auto integer = [&] {
    auto n = parseInt(value);
    if (!n) throw UsageError(fmt::format("argument {}: invalid int value: '{}'", flag, value));
    return *n;
  };
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(a.*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          a.*member = true;
        } else if constexpr (std::is_same_v<T, long long> || std::is_same_v<T, std::optional<long long>>) {
          a.*member = integer();
        } else {
          a.*member = value;
        }
      },
      r.field);
}

}  // namespace

DeepSpeedArgs parseDeepSpeedArgs(const std::vector<std::string>& words) {
  A a;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      a.command.assign(words.begin() + static_cast<long>(i) + 1, words.end());
      break;
    }
    if (word.size() < 2 || word[0] != '-') {
      a.command.assign(words.begin() + static_cast<long>(i), words.end());
      break;
    }
    auto takeValue = [&](const Row& r, std::string attached, bool has_attached) {
      if (has_attached) return attached;
      if (i + 1 < words.size() && !looksLikeOption(words[i + 1])) return words[++i];
      throw UsageError(fmt::format("argument {}: expected one argument", dashed(r.name)));
    };
    if (word.rfind("--", 0) == 0) {
      const size_t eq = word.find('=');
      const Row* found = findLong(word.substr(0, eq));
      if (!found) {
        a.help = true;
        continue;
      }
      const Row& r = *found;
      if (isSwitch(r)) {
        if (eq != std::string::npos) {
          throw UsageError(
              fmt::format("argument {}: ignored explicit argument '{}'", dashed(r.name), word.substr(eq + 1)));
        }
        store(r, "", a);
      } else {
        store(r, takeValue(r, eq == std::string::npos ? "" : word.substr(eq + 1), eq != std::string::npos), a);
      }
      continue;
    }
    // Short options, clustered as argparse allows: -q, -Hfile, -H file, -qi host.
    for (size_t k = 1; k < word.size(); ++k) {
      if (word[k] == 'h') {
        a.help = true;
        continue;
      }
      auto it = std::find_if(rows().begin(), rows().end(), [&](const Row& r) { return r.short_name == word[k]; });
      if (it == rows().end()) {
        throw UsageError(fmt::format("unrecognized arguments: {}", word),
                         "`accel deepspeed --help` lists DeepSpeed 0.19's launcher flags");
      }
      if (isSwitch(*it)) {
        store(*it, "", a);
        continue;
      }
      const std::string rest = word.substr(k + 1);
      store(*it, takeValue(*it, rest.rfind('=', 0) == 0 ? rest.substr(1) : rest, !rest.empty()), a);
      break;
    }
  }
  if (a.command.empty() && !a.help) {
    throw UsageError("the following arguments are required: user_script, user_args",
                     "name the training script after the launcher's flags: accel deepspeed [FLAGS] train.py [ARGS]");
  }
  return a;
}

std::vector<std::string> deepSpeedFlagNames() {
  std::vector<std::string> names;
  for (const auto& r : rows()) names.emplace_back(r.name);
  return names;
}

std::string deepSpeedHelp() {
  std::string out =
      "usage: accel deepspeed [FLAGS] user_script [user_args ...]\n\n"
      "DeepSpeed 0.19's launcher command line (`deepspeed`), run by accel: one worker per GPU (or per\n"
      "--num_gpus / --include slot), DeepSpeed's worker environment and --local_rank=N, one machine or\n"
      "the hosts of a hostfile. docs/deepspeed.md says what each flag does under accel.\n\n";
  for (const auto& r : rows()) {
    std::string names = r.short_name ? fmt::format("-{}, --{}", r.short_name, r.name) : dashed(r.name);
    if (!r.alias.empty()) names += ", " + dashed(r.alias);
    out += fmt::format("  {:<34} {}\n", names + (isSwitch(r) ? "" : " X"), r.help);
  }
  return out;
}

}  // namespace accel::launch::settings
