// SPDX-License-Identifier: Apache-2.0
// Text between the ranks of a group, for decisions and findings that must be the same on every
// rank (checkpoint resume: rank 0's choice, each rank's verdict on its part). Collective: every
// rank of `group` calls, in the same order. Blocking. Not for bulk data.
#pragma once

#include <string>
#include <vector>

#include "runtime/comm/backend.h"

namespace accel {

// `root`'s text, on every rank.
std::string broadcastText(Backend& group, std::string text, int root = 0);

// Every rank's text, by rank.
std::vector<std::string> allGatherText(Backend& group, const std::string& text);

}  // namespace accel
