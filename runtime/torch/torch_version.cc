// SPDX-License-Identifier: Apache-2.0
#include "runtime/torch/torch_version.h"

#include <mutex>
#include <regex>

#include <ATen/Version.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "lib/common/error.h"

namespace accel {

namespace {
std::string majorMinor(const std::string& version) {
  static const std::regex kLine(R"(^(\d+)\.(\d+))");
  std::smatch m;
  return std::regex_search(version, m, kLine) ? m[1].str() + "." + m[2].str() : "";
}
}  // namespace

std::string torchBuildVersion() { return TORCH_VERSION; }

std::string torchLoadedVersion() {
  static const std::regex kSetting(R"(TORCH_VERSION=([0-9][^,\s]*))");
  const std::string config = at::show_config();
  std::smatch m;
  return std::regex_search(config, m, kSetting) ? m[1].str() : "";
}

bool torchVersionsCompatible(const std::string& built, const std::string& loaded) {
  const std::string a = majorMinor(built), b = majorMinor(loaded);
  return !a.empty() && a == b;
}

void checkTorchVersion() {
  static std::once_flag once;
  static std::string refusal;
  std::call_once(once, [] {
    const std::string built = torchBuildVersion(), loaded = torchLoadedVersion();
    if (!torchVersionsCompatible(built, loaded)) {
      refusal = fmt::format("libaccel_torch was built against libtorch {} but libtorch {} is loaded", built,
                            loaded.empty() ? "of unknown version" : loaded);
    }
  });
  if (!refusal.empty()) {
    throw Error(refusal,
                "rebuild accel's torch component against the libtorch you run with (CMAKE_PREFIX_PATH), "
                "or put that libtorch's lib/ first on LD_LIBRARY_PATH");
  }
}

}  // namespace accel
