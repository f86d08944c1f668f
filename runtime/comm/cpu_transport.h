// SPDX-License-Identifier: Apache-2.0
// Picks the transport of a CPU group when it is made. The ranks exchange their host identities
// (host_identity.h) through the group's store, then:
//   all on one machine                  -> shared memory (shm_backend.h)
//   on several, some sharing a machine  -> shared memory inside each, Gloo between the hosts'
//                                          leaders (hierarchical_backend.h)
//   one per machine, or shm turned off  -> Gloo
// If some member of a machine cannot map the segment, that machine's ranks use Gloo instead,
// all of them, and the first of them says why. Collective: every rank of the group calls it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "runtime/comm/backend.h"
#include "runtime/comm/gloo_backend.h"
#include "runtime/store/store.h"

namespace accel {

struct CpuTransportOptions {
  GlooOptions gloo;            // its timeout and diagnose serve the shared-memory transport too
  bool shm = true;             // false: Gloo only (ACCEL_SHM=0)
  std::string host_id;         // empty: hostIdentity()
  size_t shm_chunk_bytes = 0;  // 0: ShmOptions::slotBytesFor(members); tests make it small
  // Gets one line per group saying which transport it uses (on the group's rank 0), when set.
  std::function<void(const std::string&)> log;
  // Gets a line when shared memory was expected and could not be used; the default prints it.
  std::function<void(const std::string&)> warn;
};

std::unique_ptr<Backend> makeCpuBackend(Store& store, int rank, int size, const CpuTransportOptions& options);

}  // namespace accel
