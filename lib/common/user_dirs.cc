// SPDX-License-Identifier: Apache-2.0
#include "lib/common/user_dirs.h"

#include <pwd.h>
#include <unistd.h>

#include "lib/common/variables.h"

namespace accel {

std::string homeDirectory() {
  if (const std::string& home = env::kHome.value(); !home.empty()) return home;
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_dir;
  return "";
}

std::string cacheDirectory() {
  if (const std::string& xdg = env::kXdgCacheHome.value(); !xdg.empty()) return xdg;
  return homeDirectory() + "/.cache";
}

}  // namespace accel
