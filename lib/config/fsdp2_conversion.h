// SPDX-License-Identifier: Apache-2.0
// `accel to-fsdp2`'s conversion: Accelerate 1.15's `accelerate to-fsdp2` (its to_fsdp2.py)
// rewrites a config's fsdp_config from FSDP1's names and values to FSDP2's and sets
// fsdp_version: 2. That command reads the file with PyYAML's safe_load and no config class, so
// any key is kept as written; so is it here: the file is read without the schema (unlike
// loader.h), its values typed as PyYAML types them (yaml_values.h). Written back with
// dumpYaml (writer.h), the result is byte for byte the file Accelerate writes.
//
// The rules, in fsdp_config's order (a key's first place in the file, its last value):
// - fsdp_sharding_strategy becomes fsdp_reshard_after_forward, and both keys' FSDP1 strategy
//   names become booleans (FULL_SHARD and HYBRID_SHARD true, SHARD_GRAD_OP, HYBRID_SHARD_ZERO2
//   and NO_SHARD false); other values are kept as they are. Where both keys are given, the later
//   one counts.
// - fsdp_backward_prefetch, fsdp_sync_module_states and fsdp_use_orig_params (gone in FSDP2) and
//   fsdp_forward_prefetch (not in FSDP2 yet) are dropped, each with a warning.
// - every other key is kept as it is, and fsdp_version becomes 2.
// An fsdp_config whose fsdp_version is already 2 is left as it is, with a warning.
// Pure apart from reading the file; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/error.h"

namespace accel {

struct Fsdp2Conversion {
  nlohmann::json config;             // the whole file, its fsdp_config converted
  bool already_fsdp2 = false;        // fsdp_version was 2: `config` is the file as read
  std::vector<Diagnostic> warnings;  // keys dropped, or the file already FSDP2
};

// One key of fsdp_config as PyYAML's safe_load holds it; `where` is file:line:column.
struct FsdpEntry {
  std::string key;
  nlohmann::json value;
  std::string where;
};

// FSDP1's entries as FSDP2's (the rules above); a dropped key adds a warning. Throws
// ConfigError where Accelerate's conversion fails (a list or map as the sharding strategy).
nlohmann::json convertFsdpEntries(const std::vector<FsdpEntry>& entries, std::vector<Diagnostic>& warnings);

// Reads the file as PyYAML's safe_load would and converts it. Throws ConfigError (exit 2) naming
// the file, with file:line:column where there is one, for a file that cannot be read or parsed,
// an empty file, a top level that is not a map, a key that is not a name, a value accel cannot
// write back as PyYAML would (a date, an integer past 64 bits), and a file without an
// fsdp_config map (Accelerate copies such a file unchanged; accel says it has nothing to do).
Fsdp2Conversion convertFileToFsdp2(const std::string& path);

}  // namespace accel
