// SPDX-License-Identifier: Apache-2.0
// Fuzz target: SLURM hostlist expansion and allocation detection (lib/launch/settings/slurm.h), what
// `accel launch` does with the SLURM_* variables of the job it runs in.
// Input: NUL-separated records: the hostlist, then optionally SLURM_NODEID, SLURM_NNODES,
// SLURM_GPUS_ON_NODE and SLURM_STEP_NUM_NODES values (a seed is a hostlist on its own).
// Properties:
//   - expandHostlist returns hosts or throws UsageError, nothing else, for any text; it never
//     runs out of memory or time, however many hosts the text claims (a bounded expansion);
//   - no expanded host is empty or still contains a bracket or a comma;
//   - detectSlurm finds the same first host, or throws UsageError.
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/launch/settings/slurm.h"
#include "tests/fuzz/fuzz_support.h"

using namespace accel;
using namespace accel::launch::settings;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto records = fuzz::splitRecords(fuzz::bytes(data, size));
  const std::string& list = records[0];
  std::vector<std::string> hosts;
  bool expanded = false;
  try {
    hosts = expandHostlist(list);
    expanded = true;
  } catch (const UsageError& e) {
    FUZZ_CHECK(std::string(e.what()).find("hostlist") != std::string::npos, std::string("unclear error: ") + e.what());
  }
  FUZZ_CHECK(hosts.size() <= 65536, "more hosts than the documented bound");
  for (const auto& h : hosts) {
    FUZZ_CHECK(!h.empty() && h.find_first_of("[],") == std::string::npos, "bad host '" + h + "' from '" + list + "'");
  }

  std::map<std::string, std::string> env = {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", list}};
  const char* names[] = {"SLURM_NODEID", "SLURM_NNODES", "SLURM_GPUS_ON_NODE", "SLURM_STEP_NUM_NODES"};
  for (size_t i = 1; i < records.size() && i <= std::size(names); ++i) env[names[i - 1]] = records[i];
  try {
    auto slurm = detectSlurm(env);
    FUZZ_CHECK(slurm.has_value(), "SLURM_JOB_ID is set but no allocation was detected");
    if (expanded && !hosts.empty()) FUZZ_CHECK(slurm->first_host == hosts.front(), "another first host");
    if (expanded && hosts.empty()) FUZZ_CHECK(slurm->first_host.empty(), "a first host from an empty list");
  } catch (const UsageError&) {
    // A malformed variable or hostlist: the launcher reports it and stops.
  }
  return 0;
}
