// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/host_environment.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::settings {

namespace {

// DeepSpeed's EXPORT_ENVS (deepspeed/launcher/runner.py), and accel's own settings.
constexpr const char* kForwardedPrefixes[] = {"MLFLOW", "NCCL", "PYTHON", "MV2", "UCX", "ACCEL_"};
// accel's variables that are this head's business, not the hosts'.
const char* const kKeptHere[] = {launch_env::kStoreToken, env::kSshArgs.name(), env::kRemoteAccel.name()};

bool forwarded(const std::string& name) {
  for (const char* kept : kKeptHere) {
    if (name == kept) return false;
  }
  for (const char* prefix : kForwardedPrefixes) {
    if (startsWith(name, prefix)) return true;
  }
  return false;
}

// KEY=VALUE lines, split at the first '=' as DeepSpeed does; blank lines skipped.
void readEnvFile(const std::string& path, std::map<std::string, std::string>& env) {
  std::ifstream in(path);
  if (!in) return;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || trim(line.substr(0, eq)).empty()) {
      throw UsageError(fmt::format("{}:{}: '{}' is not KEY=VALUE", path, n, line),
                       "each line of a .deepspeed_env is one variable for every host, e.g. NCCL_DEBUG=INFO");
    }
    env[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));  // DeepSpeed strips both
  }
}

std::string valueOf(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace

std::vector<std::string> sshOptions(const std::optional<long long>& port, const std::optional<std::string>& args,
                                    const std::map<std::string, std::string>& vars, const std::string& home,
                                    double heartbeat_timeout) {
  std::vector<std::string> argv = {"-o", "BatchMode=yes"};
  if (port) argv.insert(argv.end(), {"-p", std::to_string(*port)});
  const std::string text = args ? *args : env::kSshArgs.in(vars);
  const auto words = shellWords(text);
  if (!words) {
    throw UsageError(fmt::format("{} '{}' has an open quote", args ? "--ssh_args" : env::kSshArgs.name(), text),
                     "close it, e.g. --ssh_args \"-F '/path/with space/config'\"");
  }
  for (const auto& w : *words) argv.push_back(startsWith(w, "~/") && !home.empty() ? home + w.substr(1) : w);
  if (heartbeat_timeout > 0) {
    const long long probes = std::max(1LL, static_cast<long long>(std::ceil(heartbeat_timeout)));
    argv.insert(argv.end(), {"-o", fmt::format("ConnectTimeout={}", probes), "-o", "ServerAliveInterval=1", "-o",
                             fmt::format("ServerAliveCountMax={}", probes)});
  }
  return argv;
}

std::map<std::string, std::string> forwardedEnvironment(const std::map<std::string, std::string>& vars,
                                                        const std::string& cwd, const std::string& home) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : vars) {
    if (forwarded(name)) out[name] = value;
  }
  const std::string path = valueOf(vars, launch_env::kPythonPath);  // DeepSpeed puts the working directory first
  out[launch_env::kPythonPath] = path.empty() ? cwd : cwd + ":" + path;
  const std::string file = env::kDeepSpeedEnvFile.in(vars);
  if (!home.empty() && !startsWith(file, "/")) readEnvFile(home + "/" + file, out);
  readEnvFile(startsWith(file, "/") ? file : cwd + "/" + file, out);
  return out;
}

}  // namespace accel::launch::settings
