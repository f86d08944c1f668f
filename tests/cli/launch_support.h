// SPDX-License-Identifier: Apache-2.0
// What the `accel launch` tests share (launch_env_test.cc, launch_placement_test.cc): a hermetic
// environment with fake GPUs, a launch through the real binary, and the workers' environments
// read back from env_worker's output.
#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace accel::test {

// A hermetic environment: no user config, no real GPU library, `gpus` fake NVML GPUs.
inline std::map<std::string, std::string> launchEnv(const TempDir& dir, int gpus = 0,
                                                    std::map<std::string, std::string> extra = {}) {
  if (gpus > 0) extra.emplace("ACCEL_NVML_LIBRARY", fakeNvmlLibrary());
  extra.emplace("FAKE_NVML_GPUS", std::to_string(gpus));
  extra.emplace("CUDA_VISIBLE_DEVICES", "");
  extra.emplace("OMP_NUM_THREADS", "");
  return accel::test::hermeticEnv(dir, std::move(extra));
}

inline RunResult launch(const TempDir& dir, std::vector<std::string> args, int gpus = 0,
                        std::map<std::string, std::string> extra = {}) {
  std::vector<std::string> argv = {accelBinary(), "launch"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, launchEnv(dir, gpus, std::move(extra)), 60000);
}

// rank -> the worker's "env NAME=VALUE" lines as a map, parsed from "[rank N] env …" output.
inline std::map<int, std::map<std::string, std::string>> workerEnvs(const std::string& out) {
  std::map<int, std::map<std::string, std::string>> envs;
  std::regex line(R"(\[(?:[^\]:]+:)?rank (\d+)\] env ([A-Z_]+)=(.*))");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    envs[std::stoi((*it)[1])][(*it)[2]] = (*it)[3];
  }
  return envs;
}

}  // namespace accel::test
