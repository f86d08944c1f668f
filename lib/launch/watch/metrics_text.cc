// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/metrics_text.h"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace accel::launch::watch {

namespace {

// A sample's value as the format writes numbers (Go's float syntax; never a locale's).
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void family(const char* name, const char* type, const char* help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const char* name, const std::string& labels, double value) {
    out_ += name;
    out_ += labels;
    out_ += ' ';
    out_ += number(value);
    out_ += '\n';
  }

 private:
  std::string& out_;
};

void jobSeries(Writer& w, const MachineStatus& s, const std::string& job) {
  w.family("accel_job_info", "gauge", "The job: its role and accel's version (value 1).");
  w.sample("accel_job_info",
           fmt::format(R"({{job="{}",role="{}",version="{}"}})", labelValue(s.job), labelValue(s.role),
                       labelValue(s.version)),
           1);
  struct Gauge {
    const char* name;
    const char* type;
    const char* help;
    double value;
  };
  const Gauge gauges[] = {
      {"accel_job_round", "gauge", "The round the job is in (each restart or change of machines starts one).",
       static_cast<double>(s.round)},
      {"accel_job_restarts_total", "counter", "Failures restarted so far (TORCHELASTIC_RESTART_COUNT).",
       static_cast<double>(s.restarts)},
      {"accel_job_max_restarts", "gauge", "--max_restarts.", static_cast<double>(s.max_restarts)},
      {"accel_job_world_size", "gauge", "Ranks in this round.", static_cast<double>(s.world_size)},
      {"accel_job_machines", "gauge", "Machines in this round.", static_cast<double>(s.machines)},
      {"accel_job_start_time_seconds", "gauge", "When the launch started, in seconds since the epoch.", s.started},
  };
  for (const auto& g : gauges) {
    w.family(g.name, g.type, g.help);
    w.sample(g.name, job, g.value);
  }
  w.family("accel_job_ended", "gauge", "1 once the job ended (served while --metrics_linger lasts).");
  w.sample("accel_job_ended", job, s.ended ? 1 : 0);
  if (!s.ended) return;
  w.family("accel_job_exit_code", "gauge", "The launch's exit code.");
  w.sample("accel_job_exit_code", job, s.exit_code);
  w.family("accel_job_verdict", "gauge", "How the job ended: succeeded, failed, interrupted, hung or ended (value 1).");
  w.sample("accel_job_verdict", fmt::format(R"({{job="{}",verdict="{}"}})", labelValue(s.job), labelValue(s.verdict)),
           1);
}

// One family over every rank: `value` gives a rank's sample, or nullopt for none.
template <class Value>
void perRank(Writer& w, const MachineStatus& s, const std::vector<std::string>& labels, const char* name,
             const char* type, const char* help, Value value) {
  w.family(name, type, help);
  for (size_t i = 0; i < s.ranks.size(); ++i) {
    if (const std::optional<double> v = value(s.ranks[i])) w.sample(name, labels[i], *v);
  }
}

using Opt = std::optional<double>;

void rankSeries(Writer& w, const MachineStatus& s, const std::vector<std::string>& labels) {
  perRank(w, s, labels, "accel_rank_up", "gauge", "1 while the rank's process runs.",
          [](const RankStatus& r) { return Opt(r.running ? 1 : 0); });
  perRank(w, s, labels, "accel_rank_pid", "gauge", "The rank's process id.",
          [](const RankStatus& r) { return Opt(r.pid); });
  perRank(w, s, labels, "accel_rank_restarts_total", "counter", "Restarts of the job before this rank's start.",
          [&](const RankStatus&) { return Opt(s.restarts); });
  perRank(w, s, labels, "accel_rank_exit_code", "gauge",
          "The rank's exit code once it exited (128 + signal for a signal).",
          [](const RankStatus& r) { return r.exit_code ? Opt(*r.exit_code) : std::nullopt; });
  perRank(w, s, labels, "accel_rank_stopped_by_launcher", "gauge", "1 when the launcher stopped the rank.",
          [](const RankStatus& r) { return r.exit_code ? Opt(r.stopped_by_launcher ? 1 : 0) : std::nullopt; });
  perRank(w, s, labels, "accel_rank_last_output_age_seconds", "gauge", "Seconds since the rank last wrote output.",
          [](const RankStatus& r) { return r.output_age >= 0 ? Opt(r.output_age) : std::nullopt; });
  w.family("accel_rank_output_bytes_total", "counter", "Bytes the rank wrote, by stream.");
  for (size_t i = 0; i < s.ranks.size(); ++i) {
    const std::string& l = labels[i];
    const std::string base = l.substr(0, l.size() - 1);
    w.sample("accel_rank_output_bytes_total", base + R"(,stream="stdout"})",
             static_cast<double>(s.ranks[i].stdout_bytes));
    w.sample("accel_rank_output_bytes_total", base + R"(,stream="stderr"})",
             static_cast<double>(s.ranks[i].stderr_bytes));
  }
  perRank(w, s, labels, "accel_rank_progress_frames_total", "counter", "Progress-bar frames the rank drew (tqdm).",
          [](const RankStatus& r) { return Opt(static_cast<double>(r.frames)); });
  perRank(w, s, labels, "accel_rank_collectives_total", "counter",
          "Collectives the rank finished (libaccel_runtime ranks).",
          [](const RankStatus& r) { return Opt(static_cast<double>(r.collectives)); });
  perRank(w, s, labels, "accel_rank_cpu_seconds_total", "counter", "CPU time of the rank's process, user + system.",
          [](const RankStatus& r) { return Opt(r.cpu_seconds); });
  perRank(w, s, labels, "accel_rank_gpu_utilization_percent", "gauge",
          "The utilisation of the GPU the rank's process holds memory on (NVML).",
          [](const RankStatus& r) { return r.gpu >= 0 && r.gpu_percent >= 0 ? Opt(r.gpu_percent) : std::nullopt; });
  perRank(w, s, labels, "accel_rank_gpu_memory_bytes", "gauge", "GPU memory the rank's process holds (NVML).",
          [](const RankStatus& r) { return r.gpu >= 0 ? Opt(static_cast<double>(r.gpu_bytes)) : std::nullopt; });
  perRank(w, s, labels, "accel_rank_resident_memory_bytes", "gauge", "Resident memory of the rank's process.",
          [](const RankStatus& r) { return Opt(static_cast<double>(r.resident_bytes)); });
}

}  // namespace

std::string labelValue(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string renderMetrics(const MachineStatus& s) {
  std::string out;
  out.reserve(512 + s.ranks.size() * 2048);
  Writer w(out);
  const std::string job = labelValue(s.job), host = labelValue(s.host);
  if (s.decides) jobSeries(w, s, fmt::format(R"({{job="{}"}})", job));
  w.family("accel_machine_workers", "gauge", "This machine's ranks in this round.");
  w.sample("accel_machine_workers", fmt::format(R"({{job="{}",host="{}",machine="{}"}})", job, host, s.machine),
           static_cast<double>(s.ranks.size()));
  w.family("accel_machine_round_seconds", "gauge", "Seconds since this machine's round started.");
  w.sample("accel_machine_round_seconds", fmt::format(R"({{job="{}",host="{}",machine="{}"}})", job, host, s.machine),
           s.round_seconds);
  std::vector<std::string> labels;
  labels.reserve(s.ranks.size());
  for (const auto& r : s.ranks) {
    labels.push_back(fmt::format(R"({{job="{}",host="{}",machine="{}",rank="{}",local_rank="{}"}})", job, host,
                                 s.machine, r.rank, r.local_rank));
  }
  rankSeries(w, s, labels);
  return out;
}

}  // namespace accel::launch::watch
