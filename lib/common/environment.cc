// SPDX-License-Identifier: Apache-2.0
#include "lib/common/environment.h"

#include <unistd.h>

extern char** environ;

namespace accel {

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    auto eq = entry.find('=');
    if (eq != std::string::npos) out.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

std::string hostName() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "?";
}

std::string selfExecutable() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

}  // namespace accel
