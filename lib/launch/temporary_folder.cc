// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/temporary_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "lib/common/error.h"
#include "lib/launch/launch_env.h"

namespace accel {

std::string temporaryDirectory() {
  const char* tmp = ::getenv(launch_env::kTmpDir);
  return tmp && *tmp ? tmp : "/tmp";
}

std::string makeTemporaryFolder(const std::string& prefix) {
  std::string pattern = temporaryDirectory() + "/" + prefix + "XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    throw Error("cannot make the folder " + pattern + ": " + std::strerror(errno),
                "set TMPDIR to a folder you can write, with free space");
  }
  return pattern;
}

}  // namespace accel
