// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/ssh_command.h"

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/build_info.h"
#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/job/job_messages.h"

namespace accel::launch::fleet {

namespace {

std::string remoteCommand(const facts::Facts& f, const std::string& venv_script) {
  const std::string named = env::kRemoteAccel.in(f.machine.env);
  const std::string path = named.empty() ? f.machine.self : named;
  const std::string q = shellQuote(path);
  // The path is quoted once, into $p; every later use is "$p", so no character of it is code.
  // --venv_script is sourced first, as DeepSpeed's pdsh launcher does, and must succeed.
  const std::string source = venv_script.empty() ? "" : ". " + shellQuote(venv_script) + " || exit 1; ";
  return source +
         fmt::format(
             "p={}; a=$p; [ -x \"$a\" ] || a=$(command -v accel) || {{ echo \"accel: error: no accel on host "
             "$(hostname): "
             "not at $p nor on PATH ($PATH)\" >&2; echo \"accel: hint: install accel there, or name its path in "
             "\\$ACCEL_REMOTE_ACCEL on the head\" >&2; exit 127; }}; exec \"$a\" launch --from_head",
             q);
}

HeadOrders ordersFor(const plan::HostPlan& host, const settings::LaunchSettings& s, const facts::Facts& f,
                     const std::optional<std::string>& config_text) {
  HeadOrders o;
  o.protocol = job::kProtocolVersion;
  o.version = buildInfo().version;
  o.place = host.place;
  const std::string cwd = env::kPwd.in(f.machine.env);
  o.cwd = cwd.empty() ? "." : cwd;
  o.env = s.hosts.forwarded;
  o.args = s.words;
  o.config_path = s.config_path;
  o.config_text = config_text;
  return o;
}

}  // namespace

std::vector<FleetMember> fleetMembers(const plan::LaunchPlan& plan, const settings::LaunchSettings& s,
                                      const facts::Facts& f) {
  std::optional<std::string> config_text;
  if (s.config_path) config_text = readFile(*s.config_path);
  std::vector<std::string> ssh = {"ssh"};
  ssh.insert(ssh.end(), s.hosts.ssh_options.begin(), s.hosts.ssh_options.end());
  const std::string command = remoteCommand(f, s.hosts.venv_script);
  std::vector<FleetMember> members;
  for (const auto& host : plan.hosts) {
    FleetMember m;
    m.host = host.place.host;
    m.machine_rank = host.place.machine_rank;
    m.local = host.local;
    m.argv = m.local ? std::vector<std::string>{f.machine.self, "launch", "--from_head"} : ssh;
    if (!m.local) m.argv.insert(m.argv.end(), {m.host, command});
    m.orders = ordersFor(host, s, f, config_text);
    members.push_back(std::move(m));
  }
  return members;
}

}  // namespace accel::launch::fleet
