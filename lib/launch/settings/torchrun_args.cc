// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/settings/torchrun_args.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/launch_settings.h"
#include "lib/launch/settings/launcher_flag_table.h"
#include "lib/launch/settings/rdzv_conf.h"

namespace accel::launch::settings {

namespace {

// Whether the command line set `row`'s field (a switch: on; a value: present).
bool given(const LauncherFlag& row, const LaunchOptions& o) {
  return std::visit(
      [&](auto field) {
        using Field = std::remove_cvref_t<decltype(o.*field)>;
        if constexpr (std::is_same_v<Field, bool>) {
          return field != nullptr && o.*field;
        } else if constexpr (std::is_same_v<Field, std::string> || std::is_same_v<Field, std::vector<std::string>>) {
          return !(o.*field).empty();
        } else {
          return (o.*field).has_value();
        }
      },
      row.field);
}

void applyOne(const LauncherFlag& row, const std::string& variable, const std::string& text, LaunchOptions& o) {
  try {
    if (isSwitch(row)) {
      auto v = parseInt(text);
      if (!v) throw UsageError(fmt::format("'{}' is not an integer (0: off, anything else: on)", text));
      if (*v == 0) return;
      applyLauncherFlag(row, "", o);
    } else {
      applyLauncherFlag(row, text, o);
    }
  } catch (const UsageError& e) {
    std::string what = e.what();
    const std::string flag = "--" + std::string(row.name) + ": ";
    if (startsWith(what, flag)) what = what.substr(flag.size());
    throw UsageError(fmt::format("{}={}: {} (torchrun reads it as --{})", variable, text, what, row.name),
                     fmt::format("set {} to what you would give --{}, or unset it", variable, row.name));
  }
  o.origins[std::string(row.name)] = variable;
}

// "N" or "MIN:MAX" (torchrun's parse_min_max_nnodes, and its check 0 < MIN <= MAX).
std::pair<long long, long long> machinesOf(const std::string& text, const std::string& where) {
  const auto parts = split(text, ':');
  auto count = [&](const std::string& part) {
    auto v = parseInt(trim(part));
    if (!v || *v < 1) {
      throw UsageError(fmt::format("{} '{}' is not a machine count N or MIN:MAX (each at least 1)", where, text),
                       "e.g. 2, or 1:4 for a job that runs on 1 to 4 machines");
    }
    return *v;
  };
  if (parts.size() == 1) return {count(parts[0]), count(parts[0])};
  if (parts.size() != 2) {
    throw UsageError(fmt::format("{} '{}' is not N or MIN:MAX", where, text),
                     "e.g. 2, or 1:4 for a job that runs on 1 to 4 machines");
  }
  const long long min = count(parts[0]), max = count(parts[1]);
  if (min > max) {
    throw UsageError(fmt::format("{} {}: MIN {} is above MAX {}", where, text, min, max),
                     fmt::format("give the smaller count first, e.g. {} {}:{}", where, max, min));
  }
  return {min, max};
}

struct Endpoint {
  std::string host;
  long long port = kRdzvDefaultPort;
  bool port_given = false;
};

Endpoint parseEndpoint(const std::string& text, const std::string& where) {
  Endpoint e;
  // [v6-address]:port, as torchrun's parse_rendezvous_endpoint takes it.
  const auto close = text.rfind(']');
  const bool bracketed = !text.empty() && text[0] == '[' && close != std::string::npos;
  auto colon = bracketed ? std::string::npos : text.rfind(':');
  if (bracketed && close + 1 < text.size()) {
    if (text[close + 1] != ':') throw UsageError(fmt::format("{} '{}' is not HOST[:PORT]", where, text));
    colon = close + 1;
  }
  e.host = bracketed ? text.substr(1, close - 1) : text.substr(0, colon);
  if (colon != std::string::npos) {
    auto port = parseInt(text.substr(colon + 1));
    if (!port || *port < 0 || *port > 65535) {
      throw UsageError(fmt::format("{} '{}': '{}' is not a port", where, text, text.substr(colon + 1)),
                       "give HOST:PORT, e.g. node0:29400");
    }
    e.port = *port;
    e.port_given = true;
  }
  if (trim(e.host).empty()) throw UsageError(fmt::format("{} '{}' names no host", where, text), "e.g. node0:29400");
  return e;
}

std::string backendOf(const LaunchOptions& o, std::string& where) {
  if (auto it = o.values.find("rdzv_backend"); it != o.values.end())
    return where = "--rdzv_backend", it->second.get<std::string>();
  if (auto it = o.env_values.find("rdzv_backend"); it != o.env_values.end()) {
    return where = torchrunVariable("rdzv_backend"), it->second;
  }
  return "static";
}

// The Accelerate config key a torchrun flag sets; a typed Accelerate flag for it beats the
// flag's PET_ variable, which is then not read at all.
std::string_view keyOf(std::string_view flag) {
  static const std::map<std::string_view, std::string_view> keys = {{"nnodes", "num_machines"},
                                                                    {"node_rank", "machine_rank"},
                                                                    {"master_addr", "main_process_ip"},
                                                                    {"master_port", "main_process_port"},
                                                                    {"rdzv_endpoint", "main_process_ip"}};
  auto it = keys.find(flag);
  return it == keys.end() ? std::string_view{} : it->second;
}

const std::vector<std::string> kHandledNames = {"SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"};

}  // namespace

std::string torchrunVariable(std::string_view flag) { return "PET_" + toUpper(std::string(flag)); }

std::string checkSignalsToHandle(const std::string& list) {
  for (const std::string& item : split(list, ',')) {
    const std::string name = trim(item);
    if (std::find(kHandledNames.begin(), kHandledNames.end(), name) != kHandledNames.end()) continue;
    throw UsageError(fmt::format("--signals_to_handle: {} is not a signal accel launch handles (in '{}')",
                                 name.empty() ? "an empty name" : "'" + name + "'", list),
                     fmt::format("give a comma-separated list of {}; torchrun's default is {}",
                                 join(kHandledNames, ", "), launch_env::kHandledSignals));
  }
  return list;
}

void applyTorchrunEnv(LaunchOptions& o, const std::map<std::string, std::string>& env) {
  for (const auto& row : launcherFlags()) {
    if (!row.torchrun || row.no_env || given(row, o)) continue;
    if (const auto key = keyOf(row.name); !key.empty() && o.values.count(std::string(key))) continue;
    if (row.name == "shutdown_timeout" && o.grace_period) continue;
    const std::string variable = torchrunVariable(row.name);
    if (auto it = env.find(variable); it != env.end() && !it->second.empty()) applyOne(row, variable, it->second, o);
  }
  for (std::string_view flag : kTorchrunConfigFlags) {
    const std::string key(flag), variable = torchrunVariable(flag);
    auto it = env.find(variable);
    if (!o.values.count(key) && it != env.end() && !it->second.empty()) o.env_values[key] = it->second;
  }
}

namespace {

// --rdzv_backend etcd: the server is the endpoint (port 2379 unless given), reached as
// --rdzv_conf says; the machines' ranks come from the rendezvous, so a node rank is ignored.
void etcdPlacement(TorchrunPlacement& p, const LaunchOptions& o, const std::string& backend,
                   const Origin& endpoint_origin) {
  if (!o.rdzv_endpoint) {
    throw UsageError(fmt::format("{} needs --rdzv_endpoint HOST:PORT, the etcd server's client address", backend),
                     "e.g. --rdzv_endpoint etcd-host:2379 (the same on every machine)");
  }
  Endpoint e = parseEndpoint(*o.rdzv_endpoint, endpoint_origin.text());
  etcd::EtcdPlace place;
  place.server.host = e.host;
  place.server.port = e.port_given ? static_cast<int>(e.port) : etcd::kEtcdDefaultPort;
  if (const auto& c = p.rdzv_conf) {
    place.server.tls = c->https.value_or(false);
    place.server.files = {c->ca_cert.value_or(""), c->ssl_cert.value_or(""), c->ssl_cert_key.value_or("")};
    if (c->etcd_prefix) place.prefix = *c->etcd_prefix;
    if (c->read_timeout) place.call_timeout = *c->read_timeout;
    if (!place.server.tls && (c->ca_cert || c->ssl_cert || c->ssl_cert_key)) {
      throw UsageError(fmt::format("{} gives certificates with protocol http", p.rdzv_conf_origin.text()),
                       "add protocol=https to --rdzv_conf to reach etcd over TLS");
    }
  }
  p.etcd = place;
}

}  // namespace

TorchrunPlacement torchrunPlacement(const LaunchOptions& o) {
  TorchrunPlacement p;
  auto origin = [&](const std::string& flag) {
    auto it = o.origins.find(flag);
    return it == o.origins.end() ? fromCommandLine("--" + flag) : Origin{Source::Torchrun, it->second};
  };
  auto put = [&](const std::string& key, nlohmann::json value, const std::string& flag) {
    p.keys[key] = Sourced{std::move(value), origin(flag), !o.origins.count(flag)};
  };
  std::string backend_where;
  const std::string backend = backendOf(o, backend_where);
  const bool etcd = backend == "etcd" || backend == "etcd-v2";
  if (o.rdzv_conf) {
    p.rdzv_conf_origin = origin("rdzv_conf");
    p.rdzv_conf = parseRdzvConf(*o.rdzv_conf, p.rdzv_conf_origin.text(), etcd);
  }
  if (etcd) etcdPlacement(p, o, backend_where + " " + backend, origin("rdzv_endpoint"));
  std::pair<long long, long long> range{1, 1};
  if (o.nnodes) {
    range = machinesOf(*o.nnodes, origin("nnodes").text());
    put("num_machines", range.second, "nnodes");
    if (backend == "static" && range.first < range.second) {
      p.notes.push_back(
          fmt::format("{} {} with the static rendezvous: the job waits for {} machines, as torchrun's "
                      "static rendezvous does; --rdzv_backend c10d --rdzv_endpoint HOST:PORT lets "
                      "machines come and go",
                      origin("nnodes").text(), *o.nnodes, range.second));
      range.first = range.second;
    }
    p.min_machines = Sourced{range.first, origin("nnodes"), !o.origins.count("nnodes")};
  }
  const bool elastic = range.first < range.second;
  const bool ranks_given_out = etcd || (elastic && o.rdzv_endpoint);  // by the rendezvous, in each round
  if (o.node_rank && !ranks_given_out) put("machine_rank", *o.node_rank, "node_rank");
  if (o.node_rank && ranks_given_out) {
    p.notes.push_back(
        fmt::format("{} {} ignored: with --rdzv_backend {} and {} {}, machine 0 gives out the machine "
                    "ranks in each round (torchrun ignores it too)",
                    origin("node_rank").text(), *o.node_rank, backend, origin("nnodes").text(), *o.nnodes));
  }
  if (p.rdzv_conf) p.is_host = p.rdzv_conf->is_host;
  if (o.master_addr) put("main_process_ip", *o.master_addr, "master_addr");
  if (o.master_port) put("main_process_port", *o.master_port, "master_port");
  if (o.rdzv_endpoint) {
    const Endpoint e = parseEndpoint(*o.rdzv_endpoint, origin("rdzv_endpoint").text());
    put("main_process_ip", e.host, "rdzv_endpoint");
    put("main_process_port", e.port, "rdzv_endpoint");
    if (backend != "static" && !etcd && (!o.node_rank || elastic)) p.endpoint_host = e.host;
  }
  if (o.standalone) {
    if (o.nnodes && p.keys["num_machines"].value != 1) {
      throw UsageError(fmt::format("{} and {} {}: a standalone job runs on one machine", origin("standalone").text(),
                                   origin("nnodes").text(), *o.nnodes),
                       "drop --standalone to run on several machines (with --master_addr or --rdzv_endpoint)");
    }
    put("num_machines", 1, "standalone");
    p.min_machines = p.keys["num_machines"];
    put("machine_rank", 0, "standalone");
    put("main_process_ip", "127.0.0.1", "standalone");
    put("main_process_port", 0, "standalone");
    p.endpoint_host.reset();
  }
  if (o.nproc_per_node)
    p.nproc_per_node = Sourced{*o.nproc_per_node, origin("nproc_per_node"), !o.origins.count("nproc_per_node")};
  return p;
}

void resolveTorchrunOptions(LaunchSettings& s, const LaunchOptions& o) {
  auto origin = [&](const std::string& flag) {
    auto it = o.origins.find(flag);
    return it == o.origins.end() ? fromCommandLine() : Origin{Source::Torchrun, it->second};
  };
  auto given = [&](const std::string& flag) {  // "--start_method", or the variable that gave it
    auto it = o.origins.find(flag);
    return it == o.origins.end() ? "--" + flag : it->second;
  };
  s.torchrun.grammar = {o.torchrun, fromCommandLine(o.torchrun ? "accel torchrun" : "accel launch")};
  if (o.rdzv_id) s.identity.run_id = {*o.rdzv_id, origin("rdzv_id")};
  if (o.redirects) s.output.redirects = {*o.redirects, origin("redirects")};
  if (o.local_addr) s.torchrun.local_addr = {*o.local_addr, origin("local_addr")};
  s.torchrun.virtual_local_rank = {o.virtual_local_rank,
                                   o.virtual_local_rank ? origin("virtual_local_rank") : fromDefault()};
  if (o.shutdown_timeout && !o.grace_period) {
    s.supervision.grace_period = {static_cast<double>(*o.shutdown_timeout), origin("shutdown_timeout")};
  } else if (o.shutdown_timeout && static_cast<double>(*o.shutdown_timeout) != *o.grace_period &&
             !o.origins.count("shutdown_timeout")) {
    throw UsageError(fmt::format("--grace_period {:g} and --shutdown_timeout {} disagree: both are the seconds between "
                                 "SIGTERM and SIGKILL",
                                 *o.grace_period, *o.shutdown_timeout),
                     "give one of them");
  }
  if (o.start_method && *o.start_method != "spawn" && *o.start_method != "fork" && *o.start_method != "forkserver") {
    throw UsageError(fmt::format("{} '{}' is not spawn, fork or forkserver", given("start_method"), *o.start_method));
  }
  auto ignored = [&](const std::string& flag, const std::string& why) {
    s.notes.push_back(fmt::format("{} ignored: {}", given(flag), why));
  };
  if (o.start_method) ignored("start_method", "accel starts every worker as a program of its own");
}

}  // namespace accel::launch::settings
