// SPDX-License-Identifier: Apache-2.0
// Ending Gloo's connections from outside Gloo, which its API cannot do: after a failed
// operation every pair is closed before the operation's buffers die (runGuarded), and the
// group's sockets, duplicated once connected (glooSockets), are shut down so that this rank's
// and the peers' pending operations fail at once instead of at their timeout (a watch that found
// ranks calling different collectives, a rank abandoning its part). Used by gloo_backend.cc only.
#pragma once

#include <vector>

#include "lib/common/function_ref.h"

namespace gloo {
class Context;
}

namespace accel::comm::gloo {

// Duplicates of the connected sockets of `ctx`'s pairs (close-on-exec; the caller closes them).
// Call it once every pair is connected, before any operation runs.
std::vector<int> glooSockets(::gloo::Context& ctx);

// shutdown(SHUT_RDWR) of each descriptor; errors ignored (an already shut socket).
void shutdownSockets(const std::vector<int>& fds);

// Runs one Gloo collective (`run`, whose options it declared before this call); if it throws,
// closes every pair of `ctx` and shuts `sockets` down before the exception leaves.
void runGuarded(::gloo::Context& ctx, const std::vector<int>& sockets, FunctionRef<void()> run);

}  // namespace accel::comm::gloo
