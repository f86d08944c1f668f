// SPDX-License-Identifier: Apache-2.0
#include "apps/reference/manual_page.h"

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel {

namespace {

// Text as roff shows it: backslashes escaped, a line that would start with a control character
// guarded, the one non-ASCII character of the help texts spelled in ASCII, other ones by code.
std::string roff(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (text.compare(i, 3, "\xE2\x80\xA6") == 0) {  // U+2026, the ellipsis
      out += "...";
      i += 2;
    } else if (c >= 0x80) {
      const size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
      unsigned code = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
      for (size_t k = 1; k < len && i + k < text.size(); ++k) code = (code << 6) | (text[i + k] & 0x3F);
      out += fmt::format("\\[u{:04X}]", code);
      i += len - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string optionItem(const OptionRef& o) {
  std::string names;
  for (const auto& s : o.spellings)
    names += std::string(names.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff(s));
  const std::string arg = !o.takes_value      ? ""
                          : o.choices.empty() ? " \\fIVALUE\\fR"
                                              : fmt::format(" {{{}}}", roff(join(o.choices, ", ")));
  return fmt::format(".TP\n{}{}\n{}\n", names, arg, roff(o.help.empty() ? "(no description)" : o.help));
}

std::string commandSection(const CommandRef& c) {
  std::string out = fmt::format(".SS \"accel {}\"\n", c.path);
  out += fmt::format(".B accel {}\n", roff(c.path));
  if (!c.subcommands.empty()) out += "[\\fISUBCOMMAND\\fR]\n";
  if (!c.options.empty()) out += "[\\fIOPTIONS\\fR]\n";
  if (!c.operand_name.empty()) out += fmt::format("\\fI{}\\fR\n", roff(c.operand_name));
  out += ".PP\n" + roff(c.help) + "\n";
  std::string group;
  for (const auto& o : c.options) {
    if (!o.group.empty() && o.group != group) {
      group = o.group;
      out += fmt::format(".PP\n\\fI{}:\\fR\n", roff(group));
    }
    out += optionItem(o);
  }
  return out;
}

}  // namespace

std::string manualPage(const std::vector<CommandRef>& commands, const std::string& version) {
  // Left-adjusted and unhyphenated: option names are long words that justification cannot space.
  std::string out = fmt::format(".TH ACCEL 1 \"\" \"accel {}\" \"User Commands\"\n.ad l\n.nh\n", roff(version));
  out += ".SH NAME\naccel \\- launch distributed training, as Accelerate's and torchrun's launchers do\n";
  out +=
      ".SH SYNOPSIS\n.B accel\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B torchrun\n[\\fIOPTIONS\\fR] "
      "\\fIPROGRAM\\fR [\\fIARGS\\fR...] (accel through a link named torchrun)\n";
  const std::string& about = commands.front().help;  // "accel: what it does"
  out += ".SH DESCRIPTION\n" + roff(about.substr(about.find(": ") == std::string::npos ? 0 : about.find(": ") + 2)) +
         ". It reads and writes Accelerate's default_config.yaml, takes the flags of `accelerate launch` and of "
         "torchrun, and supervises one worker per GPU (or CPU process) on one machine or many.\n";
  out += ".SH OPTIONS\n";
  for (const auto& o : commands.front().options) out += optionItem(o);
  out += ".SH COMMANDS\n";
  for (size_t i = 1; i < commands.size(); ++i) out += commandSection(commands[i]);
  out +=
      ".SH EXIT STATUS\n0 success; 1 failure; 2 a usage or config error; 130 interrupted; "
      "\\fBaccel launch\\fR exits with the code of the worker that failed first.\n";
  out += ".SH SEE ALSO\n\\fBaccel help\\fR \\fICOMMAND\\fR, \\fBaccel launch \\-\\-help\\fR\n";
  return out;
}

}  // namespace accel
