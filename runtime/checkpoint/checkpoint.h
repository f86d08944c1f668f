// SPDX-License-Identifier: Apache-2.0
// save_state / load_state: every rank writes its part (named byte blobs: parameters, optimizer
// buffers, RNG, loss scaler, …) and rank 0 a manifest (world size, step, size and CRC-32 of
// every part). A save goes to a temporary directory renamed to a fresh DIR/step-N (never one
// that exists), then DIR/latest is replaced atomically: a crash at any point leaves the previous
// checkpoint loadable. The previous checkpoint is kept, older ones are removed, and so is what
// a killed save left (its temporary directory or file, a directory it never committed): by the
// next save, so a resumed run cleans up as soon as it saves; loading ignores it. Loading
// refuses another world size, a missing part, a bad checksum or a manifest cut short, naming
// it. A directory belongs to one job at a time (directory_lock.h). Collective: every rank of
// `group` calls, in the same order. Blocking.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/comm/backend.h"

namespace accel {

struct CheckpointPart {
  int64_t step = 0;
  std::map<std::string, std::vector<uint8_t>> blobs;
  // Loaded only: the world that saved it and the rank whose part this is (resumeCheckpoint's
  // OtherWorld rule), for state the program maps itself (a sampler's position).
  int saved_world = 0;
  int saved_rank = -1;
  std::string saved_dir{};  // the checkpoint directory it was read from (readSavedPart)
};

// Returns the directory written (DIR/step-<step>, or step-<step>.<k> when that name was taken).
std::string saveCheckpoint(Backend& group, const std::string& dir, const CheckpointPart& mine);

// Rank 0 takes DIR's lock for this process (directory_lock.h), and every rank gets the same
// answer: when another job holds it, every rank throws the same Error naming the holder. Saving
// and resuming call it; a program calls it itself to be refused before it has done any work.
void claimCheckpointDirectory(Backend& group, const std::string& dir);

// True when DIR (on this rank's machine) has a checkpoint to resume from.
bool hasCheckpoint(const std::string& dir);

// CRC-32 (IEEE 802.3), for the manifest.
uint32_t crc32(const uint8_t* data, size_t size);

}  // namespace accel

// Resuming (resumeCheckpoint, loadCheckpoint) is declared with its decision protocol.
#include "runtime/checkpoint/checkpoint_resume.h"  // IWYU pragma: export
