// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/ssh_command.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lib/common/build_info.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

// DeepSpeed's EXPORT_ENVS (deepspeed/launcher/runner.py), and accel's own settings.
constexpr const char* kForwardedPrefixes[] = {"MLFLOW", "NCCL", "PYTHON", "MV2", "UCX", "ACCEL_"};
// accel's variables that are this head's business, not the hosts'.
constexpr const char* kKeptHere[] = {launch_env::kStoreToken, launch_env::kSshArgs, launch_env::kRemoteAccel};

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

std::string remoteCommand(const FleetFacts& f) {
  auto it = f.env.find(launch_env::kRemoteAccel);
  const std::string path = it != f.env.end() && !it->second.empty() ? it->second : f.self;
  const std::string q = shellQuote(path);
  // The path is quoted once, into $p; every later use is "$p", so no character of it is code.
  return fmt::format(
      "p={}; a=$p; [ -x \"$a\" ] || a=$(command -v accel) || {{ echo \"accel: error: no accel on host $(hostname): "
      "not at $p nor on PATH ($PATH)\" >&2; echo \"accel: hint: install accel there, or name its path in "
      "\\$ACCEL_REMOTE_ACCEL on the head\" >&2; exit 127; }}; exec \"$a\" launch --from_head",
      q);
}

}  // namespace

std::vector<std::string> sshOptions(const std::optional<long long>& port, const std::optional<std::string>& args,
                                    const FleetFacts& f) {
  std::vector<std::string> argv = {"-o", "BatchMode=yes"};
  if (port) argv.insert(argv.end(), {"-p", std::to_string(*port)});
  auto env_args = f.env.find(launch_env::kSshArgs);
  const std::string text = args ? *args : env_args != f.env.end() ? env_args->second : "";
  const auto words = shellWords(text);
  if (!words) {
    throw UsageError(fmt::format("{} '{}' has an open quote", args ? "--ssh_args" : launch_env::kSshArgs, text),
                     "close it, e.g. --ssh_args \"-F '/path/with space/config'\"");
  }
  for (const auto& w : *words) argv.push_back(startsWith(w, "~/") && !f.home.empty() ? f.home + w.substr(1) : w);
  if (f.heartbeat_timeout > 0) {
    const long long probes = std::max(1LL, static_cast<long long>(std::ceil(f.heartbeat_timeout)));
    argv.insert(argv.end(), {"-o", fmt::format("ConnectTimeout={}", probes), "-o", "ServerAliveInterval=1", "-o",
                             fmt::format("ServerAliveCountMax={}", probes)});
  }
  return argv;
}

namespace {

HeadOrders ordersFor(const HostLaunch& h, const FleetFacts& f, const std::map<std::string, std::string>& env,
                     size_t machine) {
  const HostSlots& host = h.hosts[machine];
  HeadOrders o;
  o.protocol = job::kProtocolVersion;
  o.version = buildInfo().version;
  o.host = host.host;
  o.machine_rank = static_cast<int>(machine);
  o.num_machines = static_cast<int>(h.hosts.size());
  o.main_addr = h.main_addr;
  o.main_port = h.main_port;
  o.procs = static_cast<int>(host.slots.size());
  bool from_zero = true;
  for (size_t i = 0; i < host.slots.size(); ++i) from_zero = from_zero && host.slots[i] == static_cast<int>(i);
  if (!from_zero) {
    std::vector<std::string> ids;
    for (int slot : host.slots) ids.push_back(std::to_string(slot));
    o.gpu_ids = join(ids, ",");
  }
  o.token = f.token;
  o.run_id = f.run_id;
  o.cwd = f.cwd;
  o.env = env;
  o.args = f.args;
  o.config_path = f.config_path;
  o.config_text = f.config_text;
  return o;
}

}  // namespace

std::map<std::string, std::string> forwardedEnvironment(const FleetFacts& f) {
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : f.env) {
    if (forwarded(name)) env[name] = value;
  }
  auto path = f.env.find(launch_env::kPythonPath);  // DeepSpeed puts the working directory first
  env[launch_env::kPythonPath] = path == f.env.end() || path->second.empty() ? f.cwd : f.cwd + ":" + path->second;
  auto name = f.env.find(launch_env::kDeepSpeedEnvFile);
  const std::string file = name != f.env.end() && !name->second.empty() ? name->second : ".deepspeed_env";
  if (!f.home.empty() && !startsWith(file, "/")) readEnvFile(f.home + "/" + file, env);
  readEnvFile(startsWith(file, "/") ? file : f.cwd + "/" + file, env);
  return env;
}

std::vector<FleetMember> fleetMembers(const HostLaunch& h, const std::optional<long long>& ssh_port,
                                      const std::optional<std::string>& ssh_args, const FleetFacts& f) {
  const auto env = forwardedEnvironment(f);
  auto ssh = sshOptions(ssh_port, ssh_args, f);
  ssh.insert(ssh.begin(), "ssh");
  const std::string command = remoteCommand(f);
  std::vector<FleetMember> members;
  for (size_t k = 0; k < h.hosts.size(); ++k) {
    FleetMember m;
    m.host = h.hosts[k].host;
    m.machine_rank = static_cast<int>(k);
    m.local = f.is_this_machine && f.is_this_machine(m.host);
    m.argv = m.local ? std::vector<std::string>{f.self, "launch", "--from_head"} : ssh;
    if (!m.local) m.argv.insert(m.argv.end(), {m.host, command});
    m.orders = ordersFor(h, f, env, k);
    members.push_back(std::move(m));
  }
  return members;
}

}  // namespace accel
