// SPDX-License-Identifier: Apache-2.0
#include "lib/common/error.h"

namespace accel {

namespace {
std::string summary(const std::vector<Diagnostic>& diagnostics) {
  if (diagnostics.empty()) return "invalid configuration";
  return formatDiagnostic(diagnostics.front());
}
}  // namespace

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : Error(summary(diagnostics), diagnostics.empty() ? std::string() : diagnostics.front().hint, ExitStatus::Usage),
      diagnostics_(std::move(diagnostics)) {}

std::string formatDiagnostic(const Diagnostic& d) { return d.where.empty() ? d.message : d.where + ": " + d.message; }

}  // namespace accel
