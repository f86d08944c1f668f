// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the config file loader and validator (lib/config), i.e. what `accel config
// validate|show|update` and `accel launch` do with a default_config.yaml / .json they are given.
// Input: the file's text. It is read as JSON (path "fuzz.json") when its first non-blank byte is
// '{', else as YAML ("fuzz.yaml"), so the seeds are plain config files.
// Properties:
//   - parseConfigText never throws and never crashes; every error, problem and warning it
//     reports says where and what;
//   - a file that loads without errors is written back (as `accel config update` would) to text
//     that loads again without errors and is written back to the same bytes: what accel writes
//     is a fixed point (the top-level nulls and empty maps the writer drops are dropped once);
//   - parseGpuIds (the validator's gpu_ids reader) accepts or explains any text.
#include <cstdint>
#include <string>

#include "lib/config/loader.h"
#include "lib/config/validate.h"
#include "lib/config/writer.h"
#include "tests/fuzz/fuzz_support.h"

using namespace accel;

namespace {

std::string pathFor(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{' ? "fuzz.json" : "fuzz.yaml";
}

LoadResult load(const std::string& text, const std::string& path) {
  try {
    return parseConfigText(text, path);
  } catch (const std::exception& e) {
    FUZZ_FAIL(std::string("parseConfigText threw: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::bytes(data, size));
  const std::string path = pathFor(text);
  const LoadResult first = load(text, path);
  std::vector<Diagnostic> all = first.errors;
  all.insert(all.end(), first.problems.begin(), first.problems.end());
  all.insert(all.end(), first.warnings.begin(), first.warnings.end());
  for (const auto& d : all) {
    FUZZ_CHECK(!d.message.empty(), "a diagnostic without a message at " + d.where);
    FUZZ_CHECK(d.where.rfind(path, 0) == 0, "a diagnostic not placed in the file: " + formatDiagnostic(d));
  }
  if (first.errors.empty()) {
    const std::string written = serializeConfig(first.config.values, path);
    const LoadResult again = load(written, path);
    std::string why = again.errors.empty() ? "" : formatDiagnostic(again.errors.front());
    FUZZ_CHECK(again.errors.empty(), "the written file does not load: " + why + "\n--- written:\n" + written);
    const std::string rewritten = serializeConfig(again.config.values, path);
    FUZZ_CHECK(rewritten == written,
               "the written file is written back differently:\n--- written:\n" + written + "--- then:\n" + rewritten);
  }
  std::string problem;
  auto ids = parseGpuIds(text, problem);
  FUZZ_CHECK(ids || !problem.empty(), "parseGpuIds refused '" + text + "' without saying why");
  return 0;
}
