// SPDX-License-Identifier: Apache-2.0
// Resuming from a checkpoint of checkpoint.h (which includes this header): one decision, made by
// rank 0 and checked by every rank, so that no rank resumes from another step than the others.
// Three rounds between the ranks: the directory's lock, rank 0's decision
// (checkpoint_messages.h), every rank's finding.
#pragma once

#include <optional>
#include <string>

#include "runtime/checkpoint/checkpoint.h"

namespace accel {

// Resume, decided once: rank 0 resolves the checkpoint (the one DIR/latest names, or `dir`
// itself when it holds a manifest), checks its manifest, and sends its name and manifest to
// every rank; each rank checks its own part of that checkpoint in its own `dir` (size and CRC-32
// against rank 0's manifest, and its local manifest, if any, against rank 0's). If any rank
// cannot load it — missing, another step, corrupt — every rank throws the same Error naming
// each such rank, its host and what it found, so no rank resumes from another step than the
// others. Nullopt, on every rank, when rank 0 has no checkpoint and no other rank has one
// either (a rank that has one while rank 0 has none is an error too). Takes DIR's lock.
//
// A checkpoint saved by another number of processes (machines came or went): refused, naming
// both, unless the program says its state is replicated, as DDP's model and optimizer are on
// every rank. Then rank r of M loads the part of rank r mod N of the N that saved it, and the
// part says which (saved_world, saved_rank): per-rank state (random generators) comes from that
// rank; the program maps what is positional itself (a sampler resumes at the same global sample).
enum class OtherWorld { Refuse, Replicated };
std::optional<CheckpointPart> resumeCheckpoint(Backend& group, const std::string& dir,
                                               OtherWorld other = OtherWorld::Refuse);
// Rank `rank`'s part of the checkpoint `loaded` was read from, checked against that checkpoint's
// manifest on this machine: for state a program reshards itself (ZeRO's shards at another world
// size), which needs every part where this rank runs (one machine, or a shared directory).
// Throws Error naming the file that is missing or damaged. Not collective.
CheckpointPart readSavedPart(const CheckpointPart& loaded, int rank);

// resumeCheckpoint(), where no checkpoint is an Error.
CheckpointPart loadCheckpoint(Backend& group, const std::string& dir, OtherWorld other = OtherWorld::Refuse);

}  // namespace accel
