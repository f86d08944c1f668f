// SPDX-License-Identifier: Apache-2.0
// The `accel` executable. Its commands are one table (name, help, options, handler), as ninja
// keeps its tools. `accel launch` is parsed from the flag tables (lib/launch/settings/launch_args.h: a
// hash lookup per word, whatever the number of flags); the other commands, which have a few
// options each, with CLI11. Errors become `accel: error: …` and an exit code.
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>

#include "apps/commands.h"
#include "lib/common/build_info.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/settings/deepspeed_args.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/launch_help.h"

namespace accel {

namespace {

struct Options {
  ConfigFileOption file;
  std::string mixed_precision = "no";
  bool force = false;
  bool json = false;
  std::vector<std::string> files;
  std::vector<std::string> help_topic;
  std::vector<std::string> launch_args;  // accel test: the words it passes on to `accel launch`
  std::string job;                       // accel stacks: a launcher pid or a run id
  double timeout = 5;                    // accel stacks: seconds per tool
  TopOptions top;
  EstimateMemoryOptions estimate;
  std::string output_file;
  bool overwrite = false;
  std::string shell;              // accel completion
  const CLI::App* app = nullptr;  // accel completion and manual: the table as registered
};

void addConfigFile(CLI::App* cmd, Options& o) {
  cmd->add_option("--config_file,--config-file", o.file.path,
                  "config file to use (default: $HF_HOME/accelerate/default_config.yaml, else "
                  "~/.cache/huggingface/accelerate/default_config.yaml); .json is read and "
                  "written as JSON");
}

struct Command {
  const char* path;  // "config default": a subcommand of "config", which comes earlier
  const char* help;
  void (*options)(CLI::App*, Options&);
  int (*run)(Options&);  // null: handled before CLI11 (launch) or by the table walk (help)
};

const Command kCommands[] = {
    {"config", "Create a config file with an interactive wizard (or subcommands below)",
     [](CLI::App* c, Options& o) {
       addConfigFile(c, o);
       c->require_subcommand(0, 1);
     },
     [](Options& o) { return runConfigWizard(o.file); }},
    {"config default", "Write a config for this machine without questions (one process per GPU)",
     [](CLI::App* c, Options& o) {
       addConfigFile(c, o);
       c->add_option("--mixed_precision,--mixed-precision", o.mixed_precision, "no, fp16, bf16 or fp8")
           ->capture_default_str();
       c->add_flag("--force", o.force, "replace an existing file");
     },
     [](Options& o) { return runConfigDefault(o.file, o.mixed_precision, o.force); }},
    {"config update", "Load a config, convert legacy keys, fill defaults and rewrite it in place", addConfigFile,
     [](Options& o) { return runConfigUpdate(o.file); }},
    {"config show", "Print the config file in use and every key's value and where it came from",
     [](CLI::App* c, Options& o) {
       addConfigFile(c, o);
       c->add_flag("--json", o.json, "print JSON");
     },
     [](Options& o) { return runConfigShow(o.file, o.json); }},
    {"config validate", "Check config files; exit 2 on errors",
     [](CLI::App* c, Options& o) { c->add_option("files", o.files, "files to check")->required(); },
     [](Options& o) { return runConfigValidate(o.files); }},
    {"env", "Report this machine's hardware, software and config for launches and bug reports",
     [](CLI::App* c, Options& o) {
       addConfigFile(c, o);
       c->add_flag("--json", o.json, "print one JSON object (stable keys, see lib/hardware/env_report.h)");
     },
     [](Options& o) { return runEnv(o.file, o.json); }},
    {"to-fsdp2", "Convert an FSDP1 config file to FSDP2 (Accelerate's to-fsdp2)",
     [](CLI::App* c, Options& o) {
       c->add_option("--config_file,--config-file", o.file.path, "the config file to convert")->required();
       c->add_flag("--overwrite", o.overwrite,
                   "replace an existing output file (without --output_file: the config file)");
       c->add_option("--output_file,--output-file", o.output_file, "where to write the FSDP2 config");
     },
     [](Options& o) { return runToFsdp2(o.file.path, o.output_file, o.overwrite); }},
    {"merge-weights", "Not done by accel: merging FSDP checkpoints is `accelerate merge-weights`'s",
     [](CLI::App* c, Options&) { c->prefix_command(); }, [](Options&) { return refuseMergeWeights(); }},
    {"tpu-config", "Not done by accel: setting up TPU pods is `accelerate tpu-config`'s",
     [](CLI::App* c, Options&) { c->prefix_command(); }, [](Options&) { return refuseTpuConfig(); }},
    {"test",
     "Check that the config's machines can train: every collective's results, bandwidth, Accelerate's test (more "
     "words are `accel launch` flags: accel test --num_processes 4)",
     [](CLI::App* c, Options& o) {
       addConfigFile(c, o);
       c->allow_extras();
       c->callback([c, &o] { o.launch_args = c->remaining(); });
     },
     [](Options& o) { return runTest(o.file, o.launch_args); }},
    {"estimate-memory", "Accelerate's memory table for a local safetensors model, and per process for DDP/ZeRO/FSDP",
     [](CLI::App* c, Options& o) {
       c->add_option("model", o.estimate.model, "a .safetensors file, a shard index or a model directory")->required();
       c->add_option("--dtypes", o.estimate.dtypes, "float32, float16, int8 and/or int4 (default: all)")
           ->expected(1, -1);
       c->add_option("--num_processes,--num-processes", o.estimate.num_processes,
                     "processes of the training, all machines (default: the visible GPUs per machine, else 1)");
       c->add_option("--num_machines,--num-machines", o.estimate.num_machines, "machines (hybrid sharding's groups)")
           ->capture_default_str();
       c->add_option("--mixed_precision,--mixed-precision", o.estimate.mixed_precision, "no (fp32), bf16 or fp16")
           ->capture_default_str();
       c->add_flag("--json", o.estimate.json, "print one JSON object");
     },
     [](Options& o) { return runEstimateMemory(o.estimate); }},
    {"stacks", "Print every rank's current stack, on every machine of the job (py-spy, gdb): accel stacks [PID|RUN_ID]",
     [](CLI::App* c, Options& o) {
       c->add_option("job", o.job, "the job's launcher pid or run id (default: the only job running)");
       c->add_option("--timeout", o.timeout, "seconds each tool may take")->capture_default_str();
     },
     [](Options& o) { return runStacks(o.job, o.timeout); }},
    {"top",
     "Watch a running job live: every rank's state, output, rate, collective, CPU and memory: accel top [PID|RUN_ID]",
     [](CLI::App* c, Options& o) {
       c->add_option("job", o.job, "the job's launcher pid or run id (default: the only job running)");
       c->add_flag("--once", o.top.once, "print one frame as text and exit (what it does off a terminal)");
       c->add_flag("--json", o.top.json, "print one JSON object and exit");
       c->add_flag("--events", o.top.events, "follow the job's event log (events.jsonl) until the job ends");
     },
     [](Options& o) { return runTop(o.job, o.top); }},
    {"fr",
     "Print where the ranks part, from their flight records, of a running job or a folder a stop left: accel fr "
     "[PID|RUN_ID|DIR]",
     [](CLI::App* c, Options& o) {
       c->add_option("job", o.job,
                     "the job's launcher pid or run id (default: the only job running), or a folder of records "
                     "(a launch's in --log_dir, an attempt_N, or its flight/)");
       c->add_option("--timeout", o.timeout, "seconds each stack tool may take (a running job)")->capture_default_str();
       c->add_flag("--json", o.json, "print one JSON object");
     },
     [](Options& o) { return runFlightRecords(o.job, o.timeout, o.json); }},
    {"completion", "Print the completion script for bash, zsh or fish: source <(accel completion bash)",
     [](CLI::App* c, Options& o) { c->add_option("shell", o.shell, "bash, zsh or fish")->required(); },
     [](Options& o) { return runCompletion(*o.app, o.shell); }},
    {"manual", "Print accel's manual page (roff): accel manual | man -l -", nullptr,
     [](Options& o) { return runManual(*o.app); }},
    {"launch", "Start one worker per GPU (or CPU process) and supervise them (accel launch --help)", nullptr, nullptr},
    {"torchrun", "torchrun's command line, flags and defaults (also through a link named torchrun)", nullptr, nullptr},
    {"deepspeed", "DeepSpeed's launcher command line: deepspeed --num_gpus 8 train.py (also a link named deepspeed)",
     nullptr, nullptr},
    {"help", "Show help for a command: accel help config default",
     [](CLI::App* c, Options& o) { c->add_option("command", o.help_topic, "command path"); }, nullptr},
};

struct Cli {
  CLI::App app{"accel: launch distributed training (Accelerate- and torchrun-compatible)", "accel"};
  std::vector<std::pair<const Command*, CLI::App*>> commands;  // table order

  explicit Cli(Options& o) {
    o.app = &app;
    app.set_version_flag("--version", "accel " + buildInfo().version);
    app.require_subcommand(0, 1);
    for (const Command& command : kCommands) {
      std::string path = command.path;
      auto space = path.rfind(' ');
      CLI::App* parent = space == std::string::npos ? &app : find(path.substr(0, space));
      CLI::App* sub = parent->add_subcommand(path.substr(space + 1), command.help);
      if (command.options) command.options(sub, o);
      commands.emplace_back(&command, sub);
    }
  }

  CLI::App* find(const std::string& path) const {
    for (const auto& [command, sub] : commands) {
      if (path == command->path) return sub;
    }
    return nullptr;
  }

  static std::vector<std::string> names(CLI::App* parent) {
    std::vector<std::string> out;
    for (const auto* sub : parent->get_subcommands([](CLI::App*) { return true; })) out.push_back(sub->get_name());
    return out;
  }

  // Rejects an unknown (sub)command word before CLI11 sees it, with a did-you-mean. Whether an
  // option takes the next word comes from CLI11's own registration, so no list is kept by hand.
  void checkCommandWords(int argc, char** argv) const {
    CLI::App* level = const_cast<CLI::App*>(&app);
    for (int i = 1; i < argc; ++i) {
      std::string word = argv[i];
      if (!word.empty() && word[0] == '-') {
        const CLI::Option* option = level->get_option_no_throw(word.substr(0, word.find('=')));
        bool takes_value = option && option->get_items_expected_min() > 0;
        if (takes_value && word.find('=') == std::string::npos) ++i;
        continue;
      }
      std::vector<std::string> known = names(level);
      if (known.empty()) return;  // a command's own positional words (config validate FILES)
      if (std::find(known.begin(), known.end(), word) == known.end()) {
        std::string where = level == &app ? "" : " " + level->get_name();
        std::string hint = "run `accel" + where + " --help` to list commands";
        if (auto guess = didYouMean(word, known)) hint = "did you mean '" + *guess + "'?";
        throw UsageError("unknown command 'accel" + where + " " + word + "'", hint);
      }
      level = level->get_subcommand(word);
      if (level == find("help")) return;
    }
  }

  void printHelpTopic(const std::vector<std::string>& topic) {
    if (topic.size() == 1 && (topic[0] == "launch" || topic[0] == "torchrun")) {
      std::cout << (topic[0] == "launch" ? launch::settings::launchHelp() : launch::settings::torchrunHelp());
      return;
    }
    if (topic.size() == 1 && topic[0] == "deepspeed") {
      std::cout << launch::settings::deepSpeedHelp();
      return;
    }
    if (topic.empty()) {  // app.help() would show the selected `help` command's own
      std::cout << app.get_formatter()->make_help(&app, "accel", CLI::AppFormatMode::Normal);
      return;
    }
    CLI::App* level = &app;
    for (const auto& word : topic) {
      std::vector<std::string> known = names(level);
      if (std::find(known.begin(), known.end(), word) == known.end()) {
        std::string hint = "run `accel --help` to list commands";
        if (auto guess = didYouMean(word, known)) hint = "did you mean '" + *guess + "'?";
        throw UsageError("no help for unknown command '" + word + "'", hint);
      }
      level = level->get_subcommand(word);
    }
    std::cout << level->help();
  }
};

int dispatch(Cli& cli, Options& o) {
  if (cli.find("help")->parsed()) {
    cli.printHelpTopic(o.help_topic);
    return 0;
  }
  // Deepest first: "config default" before "config".
  for (auto it = cli.commands.rbegin(); it != cli.commands.rend(); ++it) {
    if (it->first->run && it->second->parsed()) return it->first->run(o);
  }
  std::cerr << cli.app.help();
  return static_cast<int>(ExitStatus::Usage);
}

// `accel launch ARGS`, or torchrun's grammar: `accel torchrun ARGS` and a link named torchrun.
int launchCommand(const std::vector<std::string>& words, launch::settings::Grammar grammar) {
  using launch::settings::Grammar;
  const launch::settings::LaunchOptions options = launch::settings::parseLaunchArgs(words, grammar);
  if (options.help) {
    std::cout << (grammar == launch::settings::Grammar::Torchrun ? launch::settings::torchrunHelp()
                                                                 : launch::settings::launchHelp());
    return 0;
  }
  return runLaunch(options);
}

// Whether this accel was started through a link named `program` (torchrun, deepspeed).
bool calledAs(const char* argv0, const std::string& program) {
  const std::string name = argv0 ? argv0 : "";
  return name == program || (name.size() > program.size() &&
                             name.compare(name.size() - program.size() - 1, program.size() + 1, "/" + program) == 0);
}

void printError(const Error& e) {
  if (const auto* config_error = dynamic_cast<const ConfigError*>(&e)) {
    for (const auto& d : config_error->diagnostics()) {
      std::cerr << ("accel: error: " + formatDiagnostic(d) + "\n");  // one write a line
      if (!d.hint.empty()) std::cerr << ("accel: hint: " + d.hint + "\n");
    }
    return;
  }
  std::cerr << ("accel: error: " + std::string(e.what()) + "\n");  // one write a line
  if (!e.hint().empty()) std::cerr << ("accel: hint: " + e.hint() + "\n");
}

int run(int argc, char** argv) {
  if (calledAs(argv[0], "torchrun")) return launchCommand({argv + 1, argv + argc}, launch::settings::Grammar::Torchrun);
  if (calledAs(argv[0], "deepspeed")) return runDeepSpeed({argv + 1, argv + argc});
  // A head's `accel launch --hostfile` starts this on every host (lib/launch/fleet/head_orders.h).
  if (argc == 3 && std::string(argv[1]) == "launch" && std::string(argv[2]) == "--from_head") {
    return runLaunchFromHead();
  }
  if (argc > 1 && std::string(argv[1]) == "launch")
    return launchCommand({argv + 2, argv + argc}, launch::settings::Grammar::Launch);
  if (argc > 1 && std::string(argv[1]) == "torchrun")
    return launchCommand({argv + 2, argv + argc}, launch::settings::Grammar::Torchrun);
  if (argc > 1 && std::string(argv[1]) == "deepspeed") return runDeepSpeed({argv + 2, argv + argc});
  Options options;
  Cli cli(options);
  try {
    cli.checkCommandWords(argc, argv);
    cli.app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << cli.app.help();
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string command;
    for (int i = 1; i < argc && argv[i][0] != '-'; ++i) command += std::string(" ") + argv[i];
    throw UsageError(e.what(), "run `accel" + command + " --help` for usage");
  }
  return dispatch(cli, options);
}

}  // namespace

}  // namespace accel

int main(int argc, char** argv) {
  try {
    return accel::run(argc, argv);
  } catch (const accel::Error& e) {
    accel::printError(e);
    return static_cast<int>(e.status());
  } catch (const std::exception& e) {
    std::cerr << "accel: error: " << e.what() << "\n";
    return static_cast<int>(accel::ExitStatus::Failure);
  }
}
