// SPDX-License-Identifier: Apache-2.0
// The libtorch this component was compiled against must be the one loaded: a component built
// against one libtorch and run with another (LD_LIBRARY_PATH, a wheel's torch/lib first) fails
// in ways that name nothing (missing symbols at best, silent layout mismatches at worst), so
// every entry point of the component refuses it first, naming both versions.
#pragma once

#include <string>

namespace accel {

// "MAJOR.MINOR.PATCH" of the headers this component was compiled with.
std::string torchBuildVersion();
// The loaded libtorch's own version (from its build settings, at::show_config), or "" when it
// does not say.
std::string torchLoadedVersion();
// Whether `built` and `loaded` are the same release line (major.minor equal). Pure.
bool torchVersionsCompatible(const std::string& built, const std::string& loaded);
// Throws Error naming both versions when the loaded libtorch is not the one compiled against.
// Checked once per process; later calls return at once.
void checkTorchVersion();

}  // namespace accel
