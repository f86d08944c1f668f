// SPDX-License-Identifier: Apache-2.0
#include "apps/reference/cli_reference.h"

#include <algorithm>
#include <cctype>

#include "lib/config/schema.h"

namespace accel {

namespace {

OptionRef optionOf(const CLI::Option& o) {
  OptionRef r;
  for (const auto& n : o.get_lnames()) r.spellings.push_back("--" + n);
  for (const auto& n : o.get_snames()) r.spellings.push_back("-" + n);
  r.takes_value = o.get_items_expected_min() > 0;
  r.help = o.get_description();
  const bool file = std::any_of(r.spellings.begin(), r.spellings.end(),
                                [](const std::string& s) { return s.find("file") != std::string::npos; });
  if (r.takes_value && file) r.value = OptionRef::Value::File;
  // An option that sets a config key takes that key's choices (config default --mixed_precision).
  const KeySpec* key = o.get_lnames().empty() ? nullptr : findKey(o.get_lnames().front());
  if (r.takes_value && key && key->type == ValueType::Enum) {
    for (auto choice : key->choices) r.choices.emplace_back(choice);
  }
  return r;
}

// A positional argument's words, from its name in the command's registration.
void setOperand(CommandRef& c, const CLI::Option& o) {
  const std::string name = o.get_name(true);
  std::string upper = name;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  c.operand_name = upper;
  if (name == "files" || name == "model") {
    c.operand = CommandRef::Operand::Files;
  } else if (name == "shell") {
    c.operand = CommandRef::Operand::Words;
    c.words = kCompletionShells;
  } else if (c.path == "help") {
    c.operand = CommandRef::Operand::Commands;
  }
}

CommandRef commandOf(const CLI::App& app, const std::string& path) {
  CommandRef c;
  c.path = path;
  c.help = app.get_description();
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    c.subcommands.push_back(sub->get_name());
  }
  for (const CLI::Option* o : app.get_options()) {
    if (o->nonpositional()) {
      c.options.push_back(optionOf(*o));
    } else {
      setOperand(c, *o);
    }
  }
  return c;
}

void walk(const CLI::App& app, const std::string& path, std::vector<CommandRef>& out) {
  out.push_back(commandOf(app, path));
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
}

}  // namespace

std::vector<CommandRef> cliReference(const CLI::App& app) {
  std::vector<CommandRef> out;
  walk(app, "", out);
  for (CommandRef& c : out) {
    // `accel launch` and `accel torchrun` are parsed from the flag tables, before CLI11; `accel
    // test` passes the words it does not know on to `accel launch`.
    if (c.path == "launch" || c.path == "torchrun") {
      c.options =
          launchFlagDocs(c.path == "launch" ? launch::settings::Grammar::Launch : launch::settings::Grammar::Torchrun);
      c.operand = CommandRef::Operand::Program;
      c.operand_name = "PROGRAM [ARGS...]";
    } else if (c.path == "test") {
      for (auto& flag : launchFlagDocs(launch::settings::Grammar::Launch)) {
        if (flag.spellings[0] != "--config_file" && flag.spellings[0] != "--help") c.options.push_back(flag);
      }
    }
  }
  return out;
}

}  // namespace accel
