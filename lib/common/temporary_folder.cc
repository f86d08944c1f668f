// SPDX-License-Identifier: Apache-2.0
#include "lib/common/temporary_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "lib/common/error.h"
#include "lib/common/variables.h"

namespace accel {

std::string temporaryDirectory() { return env::kTmpDir.value(); }

std::string makeTemporaryFolder(const std::string& prefix) {
  std::string pattern = temporaryDirectory() + "/" + prefix + "XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    throw Error("cannot make the folder " + pattern + ": " + std::strerror(errno),
                "set TMPDIR to a folder you can write, with free space");
  }
  return pattern;
}

}  // namespace accel
