// SPDX-License-Identifier: Apache-2.0
// `accel manual`: accel's manual page, accel(1), in man(7) roff, written from cli_reference.h: a
// section per command with its synopsis, what it does and every option (launch's by the groups of
// `accel launch --help`). Plain ASCII and no date, so the page is the same on every build.
#pragma once

#include <string>
#include <vector>

#include "apps/reference/cli_reference.h"

namespace accel {

std::string manualPage(const std::vector<CommandRef>& commands, const std::string& version);

}  // namespace accel
