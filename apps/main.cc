// SPDX-License-Identifier: Apache-2.0
// The `accel` executable: its only translation unit that includes CLI11 (accel-train and
// accel-bench parse theirs with apps/cli_parse.h). Parses the command line, dispatches to
// apps/cmd_*.cc, and turns errors into `accel: error: …` and an exit code.
#include <algorithm>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>

#include "apps/commands.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/build_info.h"
#include "lib/config/schema.h"

namespace accel {

namespace {

struct Options {
  ConfigFileOption file;
  std::string mixed_precision = "no";
  bool force = false;
  bool json = false;
  std::vector<std::string> files;
  std::vector<std::string> help_topic;
  LaunchOptions launch;
  // Launch flags backed by config keys, read after parsing (only those given count).
  std::vector<std::pair<std::string, CLI::Option*>> launch_values;
  std::vector<std::pair<std::string, CLI::Option*>> launch_switches;
  std::map<std::string, std::string> raw;  // storage CLI11 writes value flags into
  std::map<std::string, bool> switches;     // and switches (std::map: stable addresses)
};

// "--name,--name-with-dashes" for a flag that Accelerate spells with underscores.
std::string spellings(const std::string& name) {
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  return dashed == name ? "--" + name : "--" + name + ",--" + dashed;
}

// A value flag stored under config key `key` (e.g. --zero_stage -> deepspeed_config.zero_stage).
void addKeyOption(CLI::App* cmd, Options& o, const std::string& flag, const std::string& key) {
  const KeySpec& spec = keySpec(key);
  std::string help = std::string(spec.help) + " [config: " + key + "]";
  o.launch_values.emplace_back(key, cmd->add_option(spellings(flag), o.raw[key], help)->group(
      key.find('.') == std::string::npos ? "Resources" : "Paradigm settings (as in the config file)"));
}

// A switch that sets config key `key` to true (e.g. --same_network).
void addKeySwitch(CLI::App* cmd, Options& o, const std::string& flag, const std::string& key) {
  std::string help = std::string(keySpec(key).help) + " [config: " + key + "]";
  // Bound to a bool: CLI11 2.1 would take a string second argument as the flag's target.
  o.launch_switches.emplace_back(key, cmd->add_flag(spellings(flag), o.switches[key], help)->group("Resources"));
}

void addLaunch(CLI::App* launch, Options& o) {
  LaunchOptions& l = o.launch;
  launch->prefix_command();  // the first word that is not an option starts the program's argv
  launch->add_option("--config_file,--config-file", l.config_file,
                     "config file (default: the Accelerate default; --cpu skips it)");
  auto hardware = [&](const char* name, bool& target, const char* help) {
    launch->add_flag(spellings(name), target, help)->group("Hardware and paradigm (one at most)");
  };
  hardware("cpu", l.cpu, "run CPU workers even when GPUs are present");
  hardware("multi_gpu", l.multi_gpu, "distributed GPU training (DDP)");
  hardware("use_deepspeed", l.use_deepspeed, "DeepSpeed (exports Accelerate's ACCELERATE_DEEPSPEED_*)");
  hardware("use_fsdp", l.use_fsdp, "FSDP (exports Accelerate's FSDP_*)");
  hardware("use_megatron_lm", l.use_megatron_lm, "Megatron-LM (exports MEGATRON_LM_*)");
  hardware("tpu", l.tpu, "TPU (not supported by accel; accepted to say so)");
  for (const char* key : {"num_processes", "num_machines", "machine_rank", "main_process_ip",
                          "main_process_port", "mixed_precision", "gpu_ids", "rdzv_backend"}) {
    addKeyOption(launch, o, key, key);
  }
  addKeySwitch(launch, o, "same_network", "same_network");
  addKeySwitch(launch, o, "enable_cpu_affinity", "enable_cpu_affinity");
  addKeySwitch(launch, o, "debug", "debug");
  addKeyOption(launch, o, "gradient_accumulation_steps", "deepspeed_config.gradient_accumulation_steps");
  addKeyOption(launch, o, "dynamo_backend", "dynamo_config.dynamo_backend");
  addKeyOption(launch, o, "dynamo_mode", "dynamo_config.dynamo_mode");
  for (const char* key : {"dynamo_use_fullgraph", "dynamo_use_dynamic", "dynamo_use_regional_compilation"}) {
    addKeySwitch(launch, o, key, std::string("dynamo_config.") + key);
  }
  for (const char* map : {"deepspeed_config", "fsdp_config", "megatron_lm_config"}) {
    for (const auto& key : childKeys(map)) {
      if (key != "gradient_accumulation_steps") addKeyOption(launch, o, key, std::string(map) + "." + key);
    }
  }
  for (const auto& key : childKeys("fp8_config")) {
    if (key == "override_linear_precision") continue;
    addKeyOption(launch, o, startsWith(key, "fp8_") ? key : "fp8_" + key, "fp8_config." + key);
  }
  const char* g = "Launcher";
  launch->add_option("--num_cpu_threads_per_process,--num-cpu-threads-per-process", l.num_cpu_threads_per_process,
                     "OMP_NUM_THREADS per worker (default: $OMP_NUM_THREADS, else physical cores / local workers)")->group(g);
  launch->add_option("--max_restarts,--max-restarts", l.max_restarts, "restart the whole group up to N times after a failure")->group(g);
  launch->add_option("--monitor_interval,--monitor-interval", l.monitor_interval, "accepted for torchrun compatibility; accel is event-driven")->group(g);
  launch->add_option("--grace_period,--grace-period", l.grace_period, "seconds between SIGTERM and SIGKILL when stopping workers (default 10)")->group(g);
  launch->add_option("-t,--tee", l.tee, "streams on the console: 3 both (default), 1 stdout, 2 stderr, 0 none; or LOCAL_RANK:N,…")->group(g);
  launch->add_option("--log_dir,--log-dir", l.log_dir, "also write DIR/rank<R>.stdout.log and .stderr.log")->group(g);
  launch->add_option("--role", l.role, "ROLE_NAME for the workers (default: default)")->group(g);
  launch->add_option("--local_ranks_filter,--local-ranks-filter", l.local_ranks_filter, "local ranks whose output reaches the console, e.g. 0,3")->group(g);
  launch->add_option("--python", l.python, "interpreter for .py programs and -m (default: $ACCEL_PYTHON, else python3)")->group(g);
  launch->add_option("--rdzv_token,--rdzv-token", l.rdzv_token, "secret the rank-0 store requires (multi-machine: the same on every machine)")->group(g);
  launch->add_option("--rdzv_conf,--rdzv-conf", l.rdzv_conf, "accepted for compatibility (torchrun c10d settings)")->group(g);
  launch->add_flag("-m,--module", l.module, "run PROGRAM as a Python module (python3 -u -m)")->group(g);
  launch->add_flag("--no_python,--no-python", l.no_python, "run PROGRAM as it is")->group(g);
  launch->add_flag("-q,--quiet", l.quiet, "no informational lines from the launcher")->group(g);
  launch->add_flag("--dry_run,--dry-run", l.dry_run, "print each rank's command and environment, start nothing")->group(g);
  launch->footer("PROGRAM [ARGS...]: an executable (found on PATH), a .py script (run with python3 -u), or a module with -m. "
                 "Everything after PROGRAM is passed to it unchanged.");
}

// After parsing: values and switches the user actually gave, and the program's argv.
void collectLaunch(CLI::App* launch, Options& o) {
  for (const auto& [key, option] : o.launch_values) {
    if (option->count() > 0) o.launch.values[key] = o.raw[key];
  }
  for (const auto& [key, option] : o.launch_switches) {
    if (option->count() > 0) o.launch.values[key] = "true";
  }
  o.launch.command = launch->remaining();
}

void addConfigFile(CLI::App* cmd, Options& o) {
  cmd->add_option("--config_file,--config-file", o.file.path,
                  "config file to use (default: $HF_HOME/accelerate/default_config.yaml, else "
                  "~/.cache/huggingface/accelerate/default_config.yaml); .json is read and "
                  "written as JSON");
}

struct Cli {
  CLI::App app{"accel: launch distributed training (Accelerate- and torchrun-compatible)",
               "accel"};
  CLI::App* config = nullptr;
  CLI::App* config_default = nullptr;
  CLI::App* config_update = nullptr;
  CLI::App* config_show = nullptr;
  CLI::App* config_validate = nullptr;
  CLI::App* env = nullptr;
  CLI::App* launch = nullptr;
  CLI::App* help = nullptr;

  Cli(Options& o, bool wants_launch) {
    app.set_version_flag("--version", "accel " + buildInfo().version);
    app.require_subcommand(0, 1);
    config = app.add_subcommand(
        "config", "Create a config file with an interactive wizard (or subcommands below)");
    addConfigFile(config, o);
    config->require_subcommand(0, 1);
    config_default = config->add_subcommand(
        "default", "Write a config for this machine without questions (one process per GPU)");
    addConfigFile(config_default, o);
    config_default
        ->add_option("--mixed_precision,--mixed-precision", o.mixed_precision,
                     "no, fp16, bf16 or fp8")
        ->capture_default_str();
    config_default->add_flag("--force", o.force, "replace an existing file");
    config_update = config->add_subcommand(
        "update", "Load a config, convert legacy keys, fill defaults and rewrite it in place");
    addConfigFile(config_update, o);
    config_show = config->add_subcommand(
        "show", "Print the config file in use and every key's value and where it came from");
    addConfigFile(config_show, o);
    config_show->add_flag("--json", o.json, "print JSON");
    config_validate = config->add_subcommand("validate", "Check config files; exit 2 on errors");
    config_validate->add_option("files", o.files, "files to check")->required();
    env = app.add_subcommand(
        "env", "Report this machine's hardware, software and config for launches and bug reports");
    addConfigFile(env, o);
    env->add_flag("--json", o.json, "print one JSON object (stable keys, see lib/hardware/env_report.h)");
    launch = app.add_subcommand("launch", "Start one worker per GPU (or CPU process) and supervise them");
    // CLI11 2.1 checks each new option against all earlier ones: the ~100 launch options cost
    // milliseconds, so they are only built when the launch command (or its help) is asked for.
    if (wants_launch) addLaunch(launch, o);
    help = app.add_subcommand("help", "Show help for a command: accel help config default");
    help->add_option("command", o.help_topic, "command path");
  }

  std::vector<std::string> names(CLI::App* parent) const {
    std::vector<std::string> out;
    for (const auto* sub : parent->get_subcommands([](CLI::App*) { return true; })) {
      out.push_back(sub->get_name());
    }
    return out;
  }

  // Rejects an unknown (sub)command word before CLI11 sees it, with a did-you-mean.
  void checkCommandWords(int argc, char** argv) const {
    static const std::set<std::string> kFlags = {"-h", "--help", "--version", "--force",
                                                 "--json"};
    CLI::App* level = const_cast<CLI::App*>(&app);
    for (int i = 1; i < argc && level && level != config_validate && level != help && level != launch; ++i) {
      std::string word = argv[i];
      if (!word.empty() && word[0] == '-') {
        // An option without "=value" takes the next word as its value.
        if (word.find('=') == std::string::npos && !kFlags.count(word)) ++i;
        continue;
      }
      std::vector<std::string> known = names(level);
      if (known.empty()) return;
      if (std::find(known.begin(), known.end(), word) == known.end()) {
        std::string where = level == &app ? "" : " " + level->get_name();
        std::string hint = "run `accel" + where + " --help` to list commands";
        if (auto guess = didYouMean(word, known)) hint = "did you mean '" + *guess + "'?";
        throw UsageError("unknown command 'accel" + where + " " + word + "'", hint);
      }
      level = level->get_subcommand(word);
    }
  }

  void printHelpTopic(const std::vector<std::string>& topic) {
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
  if (cli.help->parsed()) {
    cli.printHelpTopic(o.help_topic);
    return 0;
  }
  if (cli.config_default->parsed()) return runConfigDefault(o.file, o.mixed_precision, o.force);
  if (cli.config_update->parsed()) return runConfigUpdate(o.file);
  if (cli.config_show->parsed()) return runConfigShow(o.file, o.json);
  if (cli.config_validate->parsed()) return runConfigValidate(o.files);
  if (cli.config->parsed()) return runConfigWizard(o.file);
  if (cli.env->parsed()) return runEnv(o.file, o.json);
  if (cli.launch->parsed()) {
    collectLaunch(cli.launch, o);
    return runLaunch(o.launch);
  }
  std::cerr << cli.app.help();
  return static_cast<int>(ExitStatus::Usage);
}

void printError(const Error& e) {
  if (const auto* config_error = dynamic_cast<const ConfigError*>(&e)) {
    for (const auto& d : config_error->diagnostics()) {
      std::cerr << "accel: error: " << formatDiagnostic(d) << "\n";
      if (!d.hint.empty()) std::cerr << "accel: hint: " << d.hint << "\n";
    }
    return;
  }
  std::cerr << "accel: error: " << e.what() << "\n";
  if (!e.hint().empty()) std::cerr << "accel: hint: " << e.hint() << "\n";
}

int run(int argc, char** argv) {
  Options options;
  auto word = [&](int i) { return i < argc ? std::string(argv[i]) : std::string(); };
  const bool wants_launch = word(1) == "launch" || (word(1) == "help" && word(2) == "launch");
  Cli cli(options, wants_launch);
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
