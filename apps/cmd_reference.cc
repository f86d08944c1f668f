// SPDX-License-Identifier: Apache-2.0
// `accel completion SHELL` and `accel manual`: the completion script and the manual page, written
// from the command table and the flag tables (apps/reference/).
#include <iostream>

#include "apps/commands.h"
#include "apps/reference/completion.h"
#include "apps/reference/manual_page.h"
#include "lib/common/build_info.h"

namespace accel {

int runCompletion(const CLI::App& app, const std::string& shell) {
  const std::string script = completionScript(cliReference(app), shell);
  std::cout << script;
  return 0;
}

int runManual(const CLI::App& app) {
  std::cout << manualPage(cliReference(app), buildInfo().version);
  return 0;
}

}  // namespace accel
