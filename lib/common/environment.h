// SPDX-License-Identifier: Apache-2.0
// This process's environment variables as a name -> value map (entries without '=' skipped).
// Reads `environ`: not safe against a concurrent setenv.
#pragma once

#include <map>
#include <string>

namespace accel {

std::map<std::string, std::string> processEnvironment();

// This machine's host name (gethostname), or "?".
std::string hostName();

// This program's absolute path (/proc/self/exe); "" when the kernel does not say.
std::string selfExecutable();

}  // namespace accel
