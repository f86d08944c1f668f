// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/fleet/head_orders.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/build_info.h"
#include "lib/common/error.h"
#include "lib/common/json_fields.h"
#include "lib/launch/job/job_messages.h"

namespace accel::launch::fleet {

namespace {

using nlohmann::json;

// A config file's text and a large forwarded environment fit; a stream without a newline does not.
constexpr size_t kMaxOrders = 4 * 1024 * 1024;
constexpr size_t kMaxField = 1024 * 1024;

const char* kHint =
    "install the same accel on every host (the head's is run over ssh by its path, else `accel` on PATH)";

void checkProtocol(const json& j) {
  const auto protocol = j.find("protocol");
  const auto version = j.find("version");
  if (protocol == j.end() || !protocol->is_number_integer()) {
    throw UsageError("the head's orders name no protocol: it is not an accel launcher of this kind", kHint);
  }
  if (protocol->get<long long>() == job::kProtocolVersion) return;
  throw UsageError(fmt::format("the head runs accel {} (job protocol {}), this host runs accel {} (job protocol {})",
                               version != j.end() && version->is_string() ? version->get<std::string>() : "?",
                               protocol->get<long long>(), buildInfo().version, job::kProtocolVersion),
                   kHint);
}

std::map<std::string, std::string> textMap(const json& object, const char* what) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : object.items()) {
    if (!v.is_string()) throw FieldError(fmt::format("head orders: {}.{} is not a string", what, k));
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

std::string encodeHeadOrders(const HeadOrders& o) {
  const settings::HeadPlace& p = o.place;
  json j = {{"protocol", o.protocol},
            {"version", o.version},
            {"host", p.host},
            {"machine_rank", p.machine_rank},
            {"num_machines", p.num_machines},
            {"main_addr", p.main_addr},
            {"main_port", p.main_port},
            {"procs", p.procs},
            {"gpu_ids", p.gpu_ids},
            {"token", p.token},
            {"run_id", p.run_id},
            {"cwd", o.cwd},
            {"env", o.env},
            {"args", o.args}};
  j["config"] = o.config_text ? json{{"path", o.config_path.value_or("")}, {"text", *o.config_text}} : json(nullptr);
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

HeadOrders decodeHeadOrders(const std::string& line) {
  try {
    const json j = parseObject(line, "head orders: ");
    checkProtocol(j);
    JsonFields f(j, "head orders: ", kMaxField);
    HeadOrders o;
    o.protocol = f.small("protocol", 0, 1 << 20);
    o.version = f.text("version");
    settings::HeadPlace& p = o.place;
    p.host = f.text("host");
    p.machine_rank = f.small("machine_rank", 0, 65535);
    p.num_machines = f.small("num_machines", 1, 65536);
    p.main_addr = f.text("main_addr");
    p.main_port = f.small("main_port", 1, 65535);
    p.procs = f.small("procs", 1, 65536);
    p.gpu_ids = f.text("gpu_ids");
    p.token = f.text("token");
    p.run_id = f.text("run_id");
    o.cwd = f.text("cwd");
    o.env = textMap(f.object("env", false), "env");
    o.args = f.lines("args", 65536, kMaxField);
    if (const json& config = f.object("config", true); config.is_object()) {
      JsonFields c(config, "head orders: config: ", kMaxOrders);
      o.config_path = c.text("path");
      o.config_text = c.text("text");
      c.done();
    }
    f.done();
    return o;
  } catch (const FieldError& e) {
    throw UsageError(e.what(), kHint);
  }
}

HeadOrders readHeadOrders(int fd, double timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  std::string line;
  char buffer[65536];
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    const int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      throw UsageError(fmt::format("no orders from the head within {:g} s", timeout_seconds),
                       "`accel launch --from_head` is started by `accel launch --hostfile`, which writes them");
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw UsageError("the head closed its link before sending its orders", kHint);
    line.append(buffer, static_cast<size_t>(n));
    if (line.size() > kMaxOrders) throw UsageError("the head's orders are longer than 4 MiB", kHint);
  }
  if (line.size() > line.find('\n') + 1) {
    throw UsageError("the head wrote more than its orders' line", kHint);
  }
  return decodeHeadOrders(line);
}

void watchHeadLink(int fd) {
  // The thread takes no signal: the launcher reads its signals from a signalfd (signal_channel.h),
  // which sees only those blocked in every thread.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread([fd] {
    char buffer[256];
    std::string line;
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      for (ssize_t i = 0; i < n; ++i) {
        line += buffer[i];
        if (buffer[i] != '\n') continue;
        if (line == kForwardUsr1 || line == kForwardUsr2) ::kill(::getpid(), line == kForwardUsr1 ? SIGUSR1 : SIGUSR2);
        line.clear();
      }
      if (line.size() > 64) line.clear();
      if (n > 0) continue;
      const char note[] = "accel: the head's link closed (the head stopped the job, or its connection is gone)\n";
      (void)!::write(2, note, sizeof note - 1);
      ::kill(::getpid(), SIGTERM);
      return;
    }
  }).detach();
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace accel::launch::fleet
