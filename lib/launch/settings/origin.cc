// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/origin.h"

namespace accel::launch::settings {

namespace {

const char* sourceName(Source s) {
  switch (s) {
    case Source::Head: return "the head's orders";
    case Source::CommandLine: return "command line";
    case Source::Torchrun: return "torchrun variable";
    case Source::Pod: return "Kubernetes pod";
    case Source::Slurm: return "SLURM";
    case Source::Hostfile: return "hostfile";
    case Source::ConfigFile: return "config file";
    case Source::Environment: return "environment";
    case Source::Machine: return "this machine";
    case Source::Derived: return "derived";
    case Source::Default: return "default";
  }
  return "?";
}

}  // namespace

std::string Origin::text() const { return detail.empty() ? sourceName(source) : detail; }

}  // namespace accel::launch::settings
