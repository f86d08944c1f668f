// SPDX-License-Identifier: Apache-2.0
// The transports of a CPU group, as a table in the manner of NCCL's ncclTransport: each entry
// names a transport, says from what the group knows whether it can serve the group, and makes
// its backend; a group takes the first entry that can. In order:
//   Gloo                  one rank, shared memory turned off (ACCEL_SHM=0), or one rank per
//                         machine (nothing to share)
//   shared memory         every rank on one machine (shm/shm_backend.h)
//   shared memory + Gloo  several machines, some with several ranks: shared memory inside each,
//                         Gloo between the machines' leaders (hierarchical/hierarchical_backend.h)
// Whether a machine's ranks can map a segment is known only by trying, all of them together:
// where some member cannot, that machine's ranks use Gloo instead, all of them, and the first
// of them says why. CUDA memory is not this table's: a CPU group serves CPU memory, and the
// Accelerator makes NCCL groups for a CUDA device itself (state/accelerator.h). This is the one
// file of the front door that includes the transports, which never include each other.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/comm/backend.h"
#include "runtime/comm/gloo/gloo_backend.h"
#include "runtime/comm/host_identity.h"
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

// What a group knows when it chooses, the same on every rank, so that all choose one entry.
struct GroupFacts {
  int rank = 0;
  int size = 1;
  bool shm = true;  // shared memory allowed
  // Which machine each rank is on: exchanged only when it could matter (shm, several ranks).
  std::optional<HostLayout> layout;
};

struct CpuTransport {
  const char* name;
  bool (*can_serve)(const GroupFacts& group);
  // Collective over the group's ranks, which meet in `store`; the group's rank 0 logs the
  // choice (CpuTransportOptions::log).
  std::unique_ptr<Backend> (*create)(Store& store, const GroupFacts& group, const CpuTransportOptions& options);
};

// The first entry of the table that can serve `group` (one always can). Pure.
const CpuTransport& chooseCpuTransport(const GroupFacts& group);

// Collective: every rank of the group calls it. Exchanges the ranks' host identities
// (host_identity.h) through `store` when shared memory could serve, then takes the table's choice.
std::unique_ptr<Backend> makeCpuBackend(Store& store, int rank, int size, const CpuTransportOptions& options);

}  // namespace accel
