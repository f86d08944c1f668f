// SPDX-License-Identifier: Apache-2.0
// The `accel` executable: the only translation unit that includes CLI11. Parses the command
// line, dispatches to apps/cmd_*.cc, and turns errors into `accel: error: …` and an exit code.
#include <algorithm>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>

#include "apps/commands.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"

#ifndef ACCEL_VERSION
#define ACCEL_VERSION "0.0.0"
#endif

namespace accel {

namespace {

struct Options {
  ConfigFileOption file;
  std::string mixed_precision = "no";
  bool force = false;
  bool json = false;
  std::vector<std::string> files;
  std::vector<std::string> help_topic;
};

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
  CLI::App* help = nullptr;

  explicit Cli(Options& o) {
    app.set_version_flag("--version", std::string("accel ") + ACCEL_VERSION);
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
    for (int i = 1; i < argc && level && level != config_validate && level != help; ++i) {
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
