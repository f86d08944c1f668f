// SPDX-License-Identifier: Apache-2.0
// `accel to-fsdp2`, as Accelerate 1.15's `accelerate to-fsdp2`: the same checks in the same
// order (the config file exists; --output_file unless --overwrite; an existing output file only
// with --overwrite), the conversion of lib/config/fsdp2_conversion.h, and the file written as its
// yaml.dump writes it, but atomically. And the commands accel leaves to Accelerate
// (merge-weights, tpu-config), which say what to use instead.
#include <sys/stat.h>

#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/atomic_file.h"
#include "lib/config/fsdp2_conversion.h"
#include "lib/config/writer.h"

namespace accel {

namespace {

// Python's Path.exists(): a dangling link does not exist.
bool pathExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

void checkPaths(const std::string& config_file, const std::string& output_file, bool overwrite) {
  if (!pathExists(config_file)) {
    throw ConfigError({{config_file, "config file not found",
                        "check the path given to --config_file; `accel config show` says which file is in use"}});
  }
  if (!overwrite && output_file.empty()) {
    throw UsageError("--output_file is required unless --overwrite is set",
                     fmt::format("pass --output_file NEW.yaml to write the FSDP2 config to a new file, or "
                                 "--overwrite to rewrite {} in place",
                                 config_file));
  }
  if (!overwrite && pathExists(output_file)) {
    throw UsageError(fmt::format("{}: output file already exists and --overwrite is not set", output_file),
                     "pass --overwrite to replace it, or choose another --output_file");
  }
}

}  // namespace

int runToFsdp2(const std::string& config_file, const std::string& output_file, bool overwrite) {
  checkPaths(config_file, output_file, overwrite);
  Fsdp2Conversion converted = convertFileToFsdp2(config_file);
  printWarnings(converted.warnings);
  const std::string target = output_file.empty() ? config_file : output_file;
  writeFileAtomic(target, dumpYaml(converted.config));
  std::cout << (converted.already_fsdp2 ? "FSDP2 configuration (unchanged) saved at " : "FSDP2 configuration saved at ")
            << target << "\n";
  return 0;
}

int refuseMergeWeights() {
  throw UsageError(
      "accel does not merge sharded FSDP checkpoints (Accelerate's `accelerate merge-weights`)",
      "use Accelerate's own command (pip install accelerate): `accelerate merge-weights CHECKPOINT_DIR OUTPUT_PATH`, "
      "or PyTorch's torch.distributed.checkpoint.format_utils.dcp_to_torch_save(CHECKPOINT_DIR, OUTPUT_FILE)");
}

int refuseTpuConfig() {
  throw UsageError("accel does not set up TPU pods (Accelerate's `accelerate tpu-config`)",
                   "use Accelerate's own command (pip install accelerate): `accelerate tpu-config --tpu_name NAME "
                   "--tpu_zone ZONE --command ...`, or run the setup on every TPU VM with `gcloud compute tpus "
                   "tpu-vm ssh NAME --zone ZONE --worker all --command ...`");
}

}  // namespace accel
