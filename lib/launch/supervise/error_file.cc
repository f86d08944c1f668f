// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/error_file.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/temporary_folder.h"
#include "lib/launch/supervise/log_layout.h"

namespace accel::launch::supervise {

namespace fs = std::filesystem;

ErrorFiles::~ErrorFiles() {
  std::error_code ec;
  if (!dir_.empty() && !keep_) fs::remove_all(dir_, ec);
}

std::string ErrorFiles::pathFor(int round, int local_rank) {
  if (dir_.empty() && problem_.empty()) {
    try {
      dir_ = makeTemporaryFolder("accel-errors-");  // torchrun's choice too (tempfile.mkdtemp)
    } catch (const Error& e) {
      problem_ = fmt::format("no folder for the workers' error files: {}", e.what());
    }
  }
  if (dir_.empty()) return "";
  const fs::path dir = rankLogDir(dir_, round, local_rank);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {  // a path in a missing directory would make @record fail inside the worker instead
    problem_ = fmt::format("cannot make {} for a worker's error file: {}", dir.string(), ec.message());
    return "";
  }
  fs::remove(dir / "error.json", ec);
  return (dir / "error.json").string();
}

std::optional<RecordedError> readErrorFile(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return std::nullopt;
  const nlohmann::json& m = j["message"];
  RecordedError e;
  if (m.is_string()) {  // torch writes a bare string when the message is not structured
    e.message = m.get<std::string>();
    return e;
  }
  if (!m.is_object() || !m.value("message", nlohmann::json()).is_string()) return std::nullopt;
  e.message = m["message"].get<std::string>();
  const nlohmann::json stack = m.value("extraInfo", nlohmann::json::object()).value("py_callstack", nlohmann::json());
  if (stack.is_string()) {
    for (auto& line : split(stack.get<std::string>(), '\n')) {
      if (!trim(line).empty()) e.traceback.push_back(line);
    }
  }
  return e;
}

}  // namespace accel::launch::supervise
