// SPDX-License-Identifier: Apache-2.0
// The user's folders, found one way for every caller: Accelerate's config (lib/config/config.h)
// and accel's own caches.
#pragma once

#include <string>

namespace accel {

// $HOME where set and not empty, else the password database's entry for this user, else "".
std::string homeDirectory();

// $XDG_CACHE_HOME where set and not empty (as Python's os.environ.get takes it, relative or
// not, so that Accelerate's files are where Accelerate looks), else <home>/.cache.
std::string cacheDirectory();

}  // namespace accel
