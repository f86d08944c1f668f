// SPDX-License-Identifier: Apache-2.0
// The on-disk formats of a checkpoint (see checkpoint.h), apart from the collective save/load
// so that they can be tested and fuzzed on bytes alone:
//   - the manifest, text: "accel-checkpoint 1", "world_size N", "step S", then one
//     "part RANK SIZE CRC32-HEX" line per rank;
//   - a rank's part file, binary: magic "ACCELCK1", step, blob count, then (name length, name,
//     size, bytes) per blob, integers as little-endian u64.
// Parsing never trusts its input: anything damaged is an Error naming the file and what is wrong,
// never a crash, an over-read or an allocation the input's length does not justify.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "lib/common/error.h"
#include "runtime/checkpoint/checkpoint.h"

namespace accel {

struct ManifestEntry {
  uint64_t size = 0;  // bytes of the part file
  uint32_t crc = 0;   // its CRC-32
  bool operator==(const ManifestEntry&) const = default;
};

struct Manifest {
  int world = 0;
  int64_t step = 0;
  std::map<int, ManifestEntry> parts;  // by rank
  bool operator==(const Manifest&) const = default;
};

// A manifest that is not as formatManifest wrote it: cut short, or changed since. Its hint points
// at the older checkpoint a save keeps.
class DamagedManifest : public Error {
 public:
  using Error::Error;
};

std::string formatManifest(const Manifest& manifest);
// `path` names the file in errors. Throws DamagedManifest for a file that is no manifest, a value
// that is not a whole number in range, a file cut short ("is truncated": no newline at its end,
// or lines missing after its last) and a line missing between others; Error for another format
// version. Words it does not know are skipped.
Manifest parseManifest(const std::string& text, const std::string& path);

// A rank's part file in a checkpoint directory: "rank<R>.part".
std::string partName(int rank);

std::string encodePart(const CheckpointPart& part);
// Throws Error naming `path` when the bytes are not a whole part file.
CheckpointPart decodePart(const std::string& data, const std::string& path);

}  // namespace accel
