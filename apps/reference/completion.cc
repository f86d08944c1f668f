// SPDX-License-Identifier: Apache-2.0
#include "apps/reference/completion.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

using Value = OptionRef::Value;

// A word inside single quotes, for sh and fish alike.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What _accel_value says of an option: "" (a switch), "any", "file", "folder" or "words:A B".
std::string valueWord(const OptionRef& o) {
  if (!o.takes_value) return "";
  if (!o.choices.empty()) return "words:" + join(o.choices, " ");
  return o.value == Value::File ? "file" : o.value == Value::Folder ? "folder" : "any";
}

bool dashedSpelling(const std::string& s) {
  return s.size() > 2 && s.compare(0, 2, "--") == 0 && s.find('-', 2) != std::string::npos;
}

// The spellings offered while the word typed has no dash after its "--" (`dashed` false), or has.
std::string optionWords(const CommandRef& c, bool dashed) {
  std::vector<std::string> words;
  for (const auto& o : c.options) {
    for (const auto& s : o.spellings) {
      const bool plain = s.find('-', 2) == std::string::npos || s.compare(0, 2, "--") != 0;
      if (plain || dashedSpelling(s) == dashed) words.push_back(s);
    }
  }
  return join(words, " ");
}

std::string operandWord(const CommandRef& c) {
  switch (c.operand) {
    case CommandRef::Operand::Files: return "files";
    case CommandRef::Operand::Program: return "program";
    case CommandRef::Operand::Commands: return "commands";
    case CommandRef::Operand::Words: return "words:" + join(c.words, " ");
    case CommandRef::Operand::None: break;
  }
  return "";
}

// The tables, as sh functions that set REPLY (bash and zsh read them alike).
std::string shData(const std::vector<CommandRef>& commands) {
  std::string subs, opts, values, operands;
  for (const auto& c : commands) {
    const std::string path = quoted(c.path);
    if (!c.subcommands.empty()) subs += fmt::format("    {}) REPLY={} ;;\n", path, quoted(join(c.subcommands, " ")));
    opts += fmt::format("    {}) REPLY={} ;;\n", quoted(c.path + " _"), quoted(optionWords(c, false)));
    opts += fmt::format("    {}) REPLY={} ;;\n", quoted(c.path + " -"), quoted(optionWords(c, true)));
    if (!operandWord(c).empty()) operands += fmt::format("    {}) REPLY={} ;;\n", path, quoted(operandWord(c)));
    for (const auto& o : c.options) {
      if (!o.takes_value) continue;
      std::vector<std::string> keys;
      for (const auto& s : o.spellings) keys.push_back(quoted(c.path + " " + s));
      values += fmt::format("    {}) REPLY={} ;;\n", join(keys, "|"), quoted(valueWord(o)));
    }
  }
  return fmt::format(
      "# The command tree: the words that may follow a command path.\n"
      "_accel_subcommands() {{\n  case $1 in\n{}    *) REPLY='' ;;\n  esac\n}}\n"
      "# A path's options: \"PATH _\" the underscore spellings, \"PATH -\" the dashed ones.\n"
      "_accel_options() {{\n  case \"$1 $2\" in\n{}    *) REPLY='' ;;\n  esac\n}}\n"
      "# What an option of a path takes: '' (a switch), any, file, folder or words:A B C.\n"
      "_accel_value() {{\n  case \"$1 $2\" in\n{}    *) REPLY='' ;;\n  esac\n}}\n"
      "# A path's other words: files, program, commands or words:A B C.\n"
      "_accel_operand() {{\n  case $1 in\n{}    *) REPLY='' ;;\n  esac\n}}\n",
      subs, opts, values, operands);
}

// Walks the words before the cursor: _accel_at the command path, _accel_program 1 once
// launch's PROGRAM was given (what follows is its own). Reads words and cword (0-based).
constexpr const char* kShWalk = R"(_accel_walk() {
  local i w
  _accel_at='' _accel_program=0
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ $w == -* ]]; then
      [[ $w == *=* ]] && continue
      _accel_value "$_accel_at" "$w"
      [[ -n $REPLY ]] && ((i++))
      continue
    fi
    _accel_subcommands "$_accel_at"
    if [[ " $REPLY " == *" $w "* ]]; then
      _accel_at=${_accel_at:+$_accel_at }$w
      continue
    fi
    _accel_operand "$_accel_at"
    [[ $REPLY == program ]] && { _accel_program=1; return; }
  done
}
# The candidates for cur: _accel_kind words, files, folders or nothing, and _accel_words.
_accel_candidates() {
  local style=_
  _accel_kind=words _accel_words=''
  if ((_accel_program)); then _accel_kind=files; return; fi
  if [[ -n $value ]]; then
    case $value in
      words:*) _accel_words=${value#words:} ;;
      file) _accel_kind=files ;;
      folder) _accel_kind=folders ;;
      *) _accel_kind=nothing ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then
    [[ ${cur#--} == *-* ]] && style=-
    _accel_options "$_accel_at" "$style"
    _accel_words=$REPLY
    return
  fi
  _accel_subcommands "$_accel_at"
  _accel_words=$REPLY
  _accel_operand "$_accel_at"
  case $REPLY in
    files | program) [[ -z $_accel_words ]] && _accel_kind=files ;;
    commands) _accel_subcommands '' && _accel_words="$_accel_words $REPLY" ;;
    words:*) _accel_words="$_accel_words ${REPLY#words:}" ;;
  esac
}
)";

std::string bashScript(const std::vector<CommandRef>& commands) {
  return "# bash completion for accel, written by `accel completion bash` from accel's command and flag tables.\n" +
         shData(commands) + kShWalk + R"(_accel() {
  local cur prev words cword value='' prefix=''
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n = || return
  else
    words=("${COMP_WORDS[@]}") cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  fi
  _accel_walk
  if ((!_accel_program)); then
    if [[ $cur == --*=* ]]; then
      _accel_value "$_accel_at" "${cur%%=*}" && value=$REPLY prefix=${cur%%=*}= cur=${cur#*=}
    elif [[ $prev == -* && $prev != *=* && $cword -gt 1 ]]; then
      _accel_value "$_accel_at" "$prev" && value=$REPLY
    fi
  fi
  _accel_candidates
  case $_accel_kind in
    files) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    folders) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
    nothing) COMPREPLY=() ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$_accel_words" -- "$cur") ;;
  esac
  [[ -n $prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$prefix}")
  return 0
}
complete -o bashdefault -o default -F _accel accel
)";
}

std::string zshScript(const std::vector<CommandRef>& commands) {
  return "#compdef accel\n# zsh completion for accel, written by `accel completion zsh` from accel's command and flag "
         "tables.\n" +
         shData(commands) + kShWalk +
         R"(# The walk with 0-based arrays, as bash has them; zsh's own completion functions need them 1-based.
_accel_zsh_walk() {
  emulate -L zsh -o ksh_arrays
  local cur=${words[CURRENT - 1]} prev=${words[CURRENT - 2]} cword=$((CURRENT - 1)) value=''
  _accel_walk
  if ((!_accel_program)) && [[ $prev == -* && $prev != *=* ]] && ((cword > 1)); then
    _accel_value "$_accel_at" "$prev" && value=$REPLY
  fi
  if ((!_accel_program)) && [[ $cur == --*=* ]]; then
    _accel_value "$_accel_at" "${cur%%=*}" && value=$REPLY
    _accel_equals=1
  fi
  _accel_candidates
}
_accel() {
  local REPLY _accel_at _accel_program _accel_kind _accel_words _accel_equals=0
  _accel_zsh_walk
  ((_accel_equals)) && compset -P '*='
  case $_accel_kind in
    files) _files ;;
    folders) _files -/ ;;
    nothing) return 1 ;;
    *) compadd -- ${=_accel_words} ;;
  esac
}
if [[ $funcstack[1] == _accel ]]; then _accel "$@"; else compdef _accel accel; fi
)";
}

// fish: one `complete` line per command, subcommand and option.
std::string fishCondition(const std::vector<CommandRef>& commands, const CommandRef& c) {
  if (c.path.empty()) return "__fish_use_subcommand";
  std::string cond;
  for (const auto& word : split(c.path, ' '))
    cond += std::string(cond.empty() ? "" : "; and ") + "__fish_seen_subcommand_from " + word;
  for (const auto& other : commands) {
    if (other.path.rfind(c.path + " ", 0) == 0 && other.path.find(' ', c.path.size() + 1) == std::string::npos) {
      cond += "; and not __fish_seen_subcommand_from " + other.path.substr(c.path.size() + 1);
    }
  }
  return cond;
}

std::string fishOption(const std::string& cond, const OptionRef& o) {
  std::string line = "complete -c accel -n " + quoted(cond);
  for (const auto& s : o.spellings) line += s.compare(0, 2, "--") == 0 ? " -l " + s.substr(2) : " -s " + s.substr(1);
  if (o.takes_value) {
    if (!o.choices.empty()) {
      line += " -x -a " + quoted(join(o.choices, " "));
    } else if (o.value == Value::File) {
      line += " -r -F";
    } else if (o.value == Value::Folder) {
      line += " -x -a '(__fish_complete_directories)'";
    } else {
      line += " -x";
    }
  }
  return line + " -d " + quoted(o.help.substr(0, o.help.find(';')).substr(0, 80)) + "\n";
}

std::string fishScript(const std::vector<CommandRef>& commands) {
  std::string out =
      "# fish completion for accel, written by `accel completion fish` from accel's command and flag tables.\n"
      "complete -c accel -f\n";
  for (const auto& c : commands) {
    const std::string cond = fishCondition(commands, c);
    for (const auto& other : commands) {
      if (!c.path.empty() && other.path.rfind(c.path + " ", 0) != 0) continue;
      const std::string rest =
          c.path.empty() ? other.path : other.path.substr(std::min(other.path.size(), c.path.size() + 1));
      if (other.path.empty() || rest.empty() || rest.find(' ') != std::string::npos) continue;
      out += "complete -c accel -n " + quoted(cond) + " -a " + quoted(rest) + " -d " +
             quoted(other.help.substr(0, 80)) + "\n";
    }
    for (const auto& o : c.options) out += fishOption(cond, o);
    if (c.operand == CommandRef::Operand::Files || c.operand == CommandRef::Operand::Program) {
      out += "complete -c accel -n " + quoted(cond) + " -F\n";
    } else if (c.operand == CommandRef::Operand::Words) {
      out += "complete -c accel -n " + quoted(cond) + " -a " + quoted(join(c.words, " ")) + "\n";
    }
  }
  return out;
}

}  // namespace

std::string completionScript(const std::vector<CommandRef>& commands, const std::string& shell) {
  if (shell == "bash") return bashScript(commands);
  if (shell == "zsh") return zshScript(commands);
  if (shell == "fish") return fishScript(commands);
  throw UsageError(fmt::format("no completion for the shell '{}'", shell),
                   "accel completion writes for " + join(kCompletionShells, ", ") + ": e.g. `accel completion bash`");
}

}  // namespace accel
