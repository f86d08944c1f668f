// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/top_model.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "lib/common/process/process_state.h"

namespace accel::launch::watch {

namespace {

std::string stateOf(const RankStatus& r) {
  if (r.running) return "running";
  if (!r.exit_code) return "starting";
  if (*r.exit_code == 0) return "exited 0";
  if (r.stopped_by_launcher) return "stopped";
  if (*r.exit_code > 128 && *r.exit_code < 128 + 65) {
    return process::signalName(*r.exit_code - 128);
  }
  return fmt::format("failed {}", *r.exit_code);
}

}  // namespace

const char* sortName(TopSort sort) {
  switch (sort) {
    case TopSort::Rank: return "rank";
    case TopSort::Cpu: return "CPU";
    case TopSort::Memory: return "memory";
    case TopSort::Quiet: return "silence";
    case TopSort::Rate: return "rate";
  }
  return "rank";
}

TopSort nextSort(TopSort sort) { return static_cast<TopSort>((static_cast<int>(sort) + 1) % 5); }

std::string barRate(const std::string& frame) {
  static const std::regex kRate(R"(([0-9]+(?:\.[0-9]+)?)\s?(it/s|s/it))");
  std::smatch m;
  std::string last;
  for (auto it = std::sregex_iterator(frame.begin(), frame.end(), kRate); it != std::sregex_iterator(); ++it) {
    last = (*it)[1].str() + (*it)[2].str();
  }
  return last;
}

double iterationsPerSecond(const std::string& bar_rate) {
  if (bar_rate.empty()) return 0;
  const double v = std::strtod(bar_rate.c_str(), nullptr);
  if (bar_rate.find("s/it") != std::string::npos) return v > 0 ? 1 / v : 0;
  return v;
}

void TopModel::update(JobView view, double seconds) {
  since_last_ = seconds - at_;
  at_ = seconds;
  view_ = std::move(view);
  before_ = std::move(now_);
  now_.clear();
  double collectives = 0, iterations = 0;
  for (const auto& m : view_.machines) {
    for (const auto& r : m.status.ranks) {
      now_[{m.status.machine, r.rank}] = {r.collectives, r.frames, r.cpu_seconds, r.pid};
      iterations += r.running ? iterationsPerSecond(barRate(r.progress)) : 0;
    }
  }
  for (const auto& row : rows(TopSort::Rank)) collectives += std::max(0.0, row.collectives_per_s);
  collectives_ = collectives_ || collectives > 0;
  throughput_.push_back(collectives_ ? collectives : iterations);
  while (throughput_.size() > kHistory) throughput_.pop_front();
}

std::vector<TopRow> TopModel::rows(TopSort sort) const {
  std::vector<TopRow> rows;
  for (const auto& m : view_.machines) {
    for (const auto& r : m.status.ranks) {
      TopRow row{&r, &m.status, stateOf(r)};
      row.bar_rate = r.running ? barRate(r.progress) : "";
      const auto before = before_.find({m.status.machine, r.rank});
      if (before != before_.end() && before->second.pid == r.pid && since_last_ > 0) {
        row.collectives_per_s =
            static_cast<double>(r.collectives - std::min(r.collectives, before->second.collectives)) / since_last_;
        row.frames_per_s = static_cast<double>(r.frames - std::min(r.frames, before->second.frames)) / since_last_;
        row.cpu_percent = r.running ? std::max(0.0, r.cpu_seconds - before->second.cpu) / since_last_ * 100 : 0;
      }
      rows.push_back(row);
    }
  }
  auto key = [&](const TopRow& row) -> double {
    switch (sort) {
      case TopSort::Rank: return row.rank->rank;
      case TopSort::Cpu: return -row.cpu_percent;
      case TopSort::Memory: return -static_cast<double>(row.rank->resident_bytes);
      case TopSort::Quiet: return -row.rank->output_age;
      case TopSort::Rate: return -std::max(row.collectives_per_s, iterationsPerSecond(row.bar_rate));
    }
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const TopRow& a, const TopRow& b) {
    return key(a) != key(b) ? key(a) < key(b) : a.rank->rank < b.rank->rank;
  });
  return rows;
}

nlohmann::json TopModel::json() const {
  using Json = nlohmann::json;
  Json out = Json::object();
  if (!view_.machines.empty()) {
    const MachineStatus& zero = view_.machines.front().status;
    out = {{"job", zero.job},
           {"round", zero.round},
           {"restarts", zero.restarts},
           {"max_restarts", zero.max_restarts},
           {"world_size", zero.world_size},
           {"machines", zero.machines},
           {"elapsed_seconds", zero.round_seconds},
           {"ended", zero.ended}};
  }
  out["throughput"] = throughput_.empty() ? 0.0 : throughput_.back();
  out["throughput_unit"] = throughputUnit();
  Json machines = Json::array();
  for (const auto& m : view_.machines) {
    machines.push_back({{"machine", m.status.machine},
                        {"host", m.status.host},
                        {"heard_seconds_ago", m.heard},
                        {"ranks", m.status.ranks.size()}});
  }
  out["hosts"] = machines;
  Json ranks = Json::array();
  for (const auto& row : rows(TopSort::Rank)) {
    const RankStatus& r = *row.rank;
    auto known = [](double v) { return v < 0 ? Json(nullptr) : Json(v); };
    ranks.push_back({{"rank", r.rank},
                     {"local_rank", r.local_rank},
                     {"machine", row.machine->machine},
                     {"host", row.machine->host},
                     {"pid", r.pid},
                     {"state", row.state},
                     {"exit_code", r.exit_code ? Json(*r.exit_code) : Json(nullptr)},
                     {"seconds_since_output", known(r.output_age)},
                     {"collectives", r.collectives},
                     {"collectives_per_second", known(row.collectives_per_s)},
                     {"progress_frames_per_second", known(row.frames_per_s)},
                     {"progress_rate", row.bar_rate},
                     {"collective", r.collective},
                     {"collective_seconds", r.collective.empty() ? Json(nullptr) : Json(r.collective_seconds)},
                     {"cpu_percent", known(row.cpu_percent)},
                     {"resident_bytes", r.resident_bytes},
                     {"gpu", r.gpu < 0 ? Json(nullptr) : Json(r.gpu)},
                     {"gpu_percent", r.gpu < 0 || r.gpu_percent < 0 ? Json(nullptr) : Json(r.gpu_percent)},
                     {"gpu_bytes", r.gpu < 0 ? Json(nullptr) : Json(r.gpu_bytes)}});
  }
  out["ranks"] = ranks;
  out["note"] = view_.note;
  return out;
}

}  // namespace accel::launch::watch
