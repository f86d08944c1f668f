// SPDX-License-Identifier: Apache-2.0
// Where a launch setting came from. Every setting carries one, so that a message or `--dry_run`
// can say why the launch does what it does ("num_processes=8 (PET_NPROC_PER_NODE)"), and code
// asks which source won by comparing the source, never its text.
#pragma once

#include <string>

namespace accel::launch::settings {

enum class Source {
  Head,         // a hostfile head's orders: this machine's place in the job (fleet/head_orders.h)
  CommandLine,  // a flag, Accelerate's or torchrun's (detail: the flag, where another one set it)
  Torchrun,     // torchrun's PET_<FLAG> variable (detail: its name)
  Pod,          // a Kubernetes operator's convention (detail: the convention and its variable)
  Slurm,        // srun's variables
  Hostfile,     // the hostfile's selection (detail: the launcher and the file)
  ConfigFile,   // the config file (detail: how it was read, where not as written)
  Environment,  // one of the launcher's own ACCEL_* variables (or OMP_NUM_THREADS)
  Machine,      // what this machine has: its GPUs, its CPUs (detail: "GPU probe")
  Derived,      // another setting decided it (detail: which, and how)
  Default,
};

struct Origin {
  Source source = Source::Default;
  std::string detail;  // "" where the source says it all

  // How messages name it: the detail where there is one, else the source ("command line",
  // "config file", "SLURM", "environment", "default", …).
  std::string text() const;
  bool operator==(const Origin&) const = default;
};

inline Origin fromCommandLine(std::string detail = {}) { return {Source::CommandLine, std::move(detail)}; }
inline Origin fromConfigFile(std::string detail = {}) { return {Source::ConfigFile, std::move(detail)}; }
inline Origin fromEnvironment() { return {Source::Environment, {}}; }
inline Origin fromDefault() { return {Source::Default, {}}; }
inline Origin derivedFrom(std::string why) { return {Source::Derived, std::move(why)}; }

}  // namespace accel::launch::settings
