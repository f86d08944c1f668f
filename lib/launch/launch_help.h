// SPDX-License-Identifier: Apache-2.0
// `accel launch --help`, written from the two flag tables (the config schema's launch flags and
// launcher_flag_table.h), grouped as Accelerate groups them.
#pragma once

#include <string>

namespace accel {

std::string launchHelp();
// `accel torchrun --help`: torchrun's flags only.
std::string torchrunHelp();

}  // namespace accel
