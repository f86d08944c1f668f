// SPDX-License-Identifier: Apache-2.0
// settingRows (launch_settings.h): every typed setting and config key by name, for --debug.
#include <algorithm>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

namespace {

std::string textOf(const std::string& v) { return v; }
std::string textOf(bool v) { return v ? "true" : "false"; }
std::string textOf(long long v) { return std::to_string(v); }
std::string textOf(int v) { return std::to_string(v); }
std::string textOf(double v) { return fmt::format("{}", v); }
std::string textOf(Pty v) { return v == Pty::On ? "on" : v == Pty::Off ? "off" : "auto"; }
std::string textOf(const std::vector<std::string>& v) { return v.empty() ? "-" : join(v, " "); }
template <class T> std::string textOf(const std::optional<T>& v) { return v ? textOf(*v) : "-"; }

struct Rows {
  std::vector<SettingRow> rows;
  template <class T> void add(const char* name, const Setting<T>& s) {
    rows.push_back({name, textOf(s.value), s.origin.text()});
  }
};

}  // namespace

std::vector<SettingRow> settingRows(const LaunchSettings& s) {
  Rows r;
  r.add("distributed_type", s.paradigm.distributed_type);
  r.add("use_cpu", s.paradigm.use_cpu);
  r.add("use_parallelism_config", s.paradigm.use_parallelism_config);
  const Placement& p = s.placement;
  r.add("num_machines", p.num_machines);
  r.add("min_machines", p.min_machines);
  r.rows.push_back({"membership",
                    p.dynamic ? fmt::format("dynamic: rounds of {} to {} machines, ranks given out by machine 0 each "
                                            "round{}; machines beyond {} wait as spares",
                                            p.min_machines.value, p.num_machines.value,
                                            p.etcd ? ", machine 0 elected in etcd at " + p.etcd->server.text() : "",
                                            p.num_machines.value)
                              : "static",
                    p.etcd      ? "rdzv_backend etcd"
                    : p.dynamic ? "rendezvous endpoint"
                                : "machine_rank"});
  r.add("machine_rank", p.machine_rank);
  r.add("main_process_ip", p.main_process_ip);
  r.add("main_process_port", p.main_process_port);
  r.add("nproc_per_node", p.nproc_per_node);
  r.add("num_processes", p.num_processes);
  r.rows.push_back({"world_at_join", textOf(p.world_at_join), "num_processes"});
  if (p.pod) r.rows.push_back({"pod_convention", p.pod->name, "environment"});
  r.add("max_restarts", s.supervision.max_restarts);
  r.add("on_hang", Setting<std::string>{s.supervision.restart_hangs.value ? "restart" : "end",
                                        s.supervision.restart_hangs.origin});
  r.add("startup_timeout", s.supervision.startup_timeout);
  r.add("max_startup_failures", s.supervision.max_startup_failures);
  r.add("max_machine_failures", s.supervision.max_machine_failures);
  r.add("gpu_free_timeout", s.supervision.gpu_free_timeout);
  r.add("max_no_progress_restarts", s.supervision.max_no_progress_restarts);
  r.add("grace_period", s.supervision.grace_period);
  r.add("role", s.supervision.role);
  r.add("signals_to_handle", s.supervision.signals_to_handle);
  r.rows.push_back({"env", textOf(s.supervision.env), "command line"});
  r.add("num_cpu_threads_per_process", s.supervision.cpu_threads);
  r.add("numa_binding", s.supervision.numa_binding);
  r.add("tee", s.output.tee);
  r.add("redirects", s.output.redirects);
  r.add("log_dir", s.output.log_dir);
  r.add("local_ranks_filter", s.output.local_ranks_filter);
  r.add("duplicate_stdout_filters", s.output.copy_filters[0]);
  r.add("duplicate_stderr_filters", s.output.copy_filters[1]);
  r.add("log_line_prefix_template", s.output.line_prefix_template);
  r.add("pty", s.output.pty);
  r.add("stdin_rank", s.output.stdin_rank);
  r.add("progress_interval", s.output.progress_interval);
  r.add("job_port", s.channel.job_port);
  r.add("heartbeat_timeout", s.channel.heartbeat_timeout);
  r.add("join_timeout", s.channel.join_timeout);
  r.add("last_call_timeout", s.channel.last_call_timeout);
  r.add("collective_timeout", s.channel.collective_timeout);
  r.add("hang_timeout", s.channel.hang_timeout);
  r.add("stacks_timeout", s.channel.stacks_timeout);
  r.add("flight_entries", s.channel.flight_entries);
  r.add("straggler_window", s.channel.straggler_window);
  r.add("straggler_share", s.channel.straggler_share);
  r.add("straggler_lateness", s.channel.straggler_lateness);
  r.add("event_log", s.watching.event_log);
  r.add("event_log_handler", s.watching.console_events);
  r.add("metrics_port", s.watching.metrics_port);
  r.add("metrics_addr", s.watching.metrics_addr);
  r.add("metrics_linger", s.watching.metrics_linger);
  r.add("rdzv_id", s.identity.run_id);
  r.rows.push_back(
      {"rdzv_token", s.identity.token.value ? launch_env::kNotShown : "-", s.identity.token.origin.text()});
  r.add("torchrun", s.torchrun.grammar);
  r.add("local_addr", s.torchrun.local_addr);
  r.add("virtual_local_rank", s.torchrun.virtual_local_rank);
  for (const auto& [key, v] : s.keys.all()) {
    r.rows.push_back({key,
                      v.value.is_null()     ? "-"
                      : v.value.is_string() ? v.value.get<std::string>()
                                            : v.value.dump(),
                      v.origin.text()});
  }
  std::sort(r.rows.begin(), r.rows.end(), [](const SettingRow& a, const SettingRow& b) { return a.name < b.name; });
  return r.rows;
}

}  // namespace accel::launch::settings
