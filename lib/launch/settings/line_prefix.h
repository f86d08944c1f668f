// SPDX-License-Identifier: Apache-2.0
// torchrun's log line prefix template: --log_line_prefix_template, else the launcher's
// TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, is a Python string.Template in which ${role_name},
// ${rank}, ${local_rank} and ${hostname} (or $role_name, …) become the worker's and `$$` is a `$`.
// Its expansion stands before each console line of the worker exactly as written, no space
// added, as torchrun's tailing of a tee'd stream does. Where torchrun's safe_substitute prints
// a name it does not know as typed, accel refuses the template before any worker starts.
#pragma once

#include <string>
#include <string_view>

#include "lib/launch/facts/facts.h"
#include "lib/launch/settings/key_values.h"
#include "lib/launch/settings/launch_options.h"

namespace accel::launch::settings {

// What a template's names stand for, for one worker.
struct LinePrefixValues {
  std::string role_name;
  int rank = 0;
  int local_rank = 0;
  std::string hostname;
};

// The line prefix template: the flag when given and not empty, else the variable (torchrun's
// order), else unset. Throws UsageError naming the flag or variable, the template and the name
// it does not know.
Setting<std::optional<std::string>> resolveLinePrefixTemplate(const LaunchOptions& o, const facts::Machine& facts);

// `tmpl` with the worker's values; throws UsageError for a name that is not one of the four
// (`where`: the flag or variable it came from, for the message).
std::string expandLinePrefix(std::string_view tmpl, const LinePrefixValues& v, std::string_view where = "");

}  // namespace accel::launch::settings
