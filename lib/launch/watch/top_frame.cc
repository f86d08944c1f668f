// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/watch/top_frame.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lib/launch/console/escapes.h"

namespace accel::launch::watch {

namespace {

std::string plain(const std::string& text) {
  console::EscapeFilter filter;
  std::string out(filter.filter(text));
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\r' || c == '\t'; }, ' ');
  return out;
}

std::string clock(double seconds) {
  const long long s = std::max(0LL, static_cast<long long>(seconds));
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::string bytes(uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1e9) return fmt::format("{:.1f}G", v / (1 << 30));
  if (v >= 1e6) return fmt::format("{:.0f}M", v / (1 << 20));
  return fmt::format("{:.0f}K", v / 1024);
}

std::string age(double seconds) {
  if (seconds < 0) return "-";
  if (seconds < 100) return fmt::format("{:.1f}s", seconds);
  return fmt::format("{:.0f}m", seconds / 60);
}

std::string rate(const TopRow& row) {
  if (!row.bar_rate.empty()) return row.bar_rate;
  if (row.collectives_per_s > 0) return fmt::format("{:.1f}c/s", row.collectives_per_s);
  if (row.frames_per_s > 0) return fmt::format("{:.1f}f/s", row.frames_per_s);
  return row.collectives_per_s < 0 ? "-" : "0";
}

std::string fit(const std::string& text, size_t width) { return console::fitToWidth(text, width); }

// A cell of `width` columns, cut or padded; the last cell of a row is not padded.
std::string cell(const std::string& text, size_t width, bool right = false) {
  const std::string cut = fit(text, width);
  size_t shown = 0;
  for (unsigned char c : cut) shown += (c & 0xC0) != 0x80;
  const std::string pad(width > shown ? width - shown : 0, ' ');
  return right ? pad + cut : cut + pad;
}

std::vector<std::string> header(const TopModel& model, const TopScreen& screen) {
  std::vector<std::string> out;
  const auto& machines = model.view().machines;
  if (machines.empty()) return {"accel top: no status yet"};
  const MachineStatus& zero = machines.front().status;
  const std::string state = zero.ended ? fmt::format("  ENDED {} (exit {})", zero.verdict, zero.exit_code) : "";
  out.push_back(fmt::format("accel top  {}{}  round {}  restarts {}/{}  world {}  machines {}  time {}", zero.job,
                            state, zero.round, zero.restarts, zero.max_restarts, zero.world_size, zero.machines,
                            clock(zero.round_seconds)));
  const double now = model.throughput().empty() ? 0 : model.throughput().back();
  const std::string label = fmt::format("throughput {:.1f} {} ", now, model.throughputUnit());
  const size_t room = static_cast<size_t>(std::max(10, screen.width)) - label.size() - 12;
  out.push_back(label + sparkline(model.throughput(), room) + fmt::format("  sort: {}", sortName(screen.sort)));
  std::string links = "machines:";
  for (const auto& m : machines) {
    links += m.heard < 0 ? fmt::format("  {} {}", m.status.machine, plain(m.status.host))
                         : fmt::format("  {} {} {}", m.status.machine, plain(m.status.host),
                                       m.heard > 5 ? fmt::format("SILENT {:.0f}s", m.heard)
                                                   : fmt::format("heard {:.1f}s ago", m.heard));
  }
  out.push_back(links);
  if (!model.view().note.empty()) out.push_back("note: " + plain(model.view().note));
  return out;
}

}  // namespace

std::string sparkline(const std::deque<double>& values, size_t columns) {
  static const char* const kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const size_t n = std::min(values.size(), columns);
  const auto from = values.end() - static_cast<long>(n);
  const double top = n ? *std::max_element(from, values.end()) : 0;
  std::string out;
  for (auto it = from; it != values.end(); ++it) {
    const int level = top > 0 ? static_cast<int>(std::lround(*it / top * 7)) : 0;
    out += kBars[std::clamp(level, 0, 7)];
  }
  return out;
}

std::vector<std::string> topFrame(const TopModel& model, const TopScreen& screen) {
  const size_t width = static_cast<size_t>(std::max(40, screen.width));
  std::vector<std::string> out = header(model, screen);
  // GPU machines get two more columns, narrower host and collective ones at 80; wider screens give
  // the extra columns to the host and the collective.
  const auto rows = model.rows(screen.sort);
  const bool gpus = std::any_of(rows.begin(), rows.end(), [](const TopRow& r) { return r.rank->gpu >= 0; });
  const size_t extra = width > 80 ? width - 80 : 0;
  const size_t host_w = (gpus ? 6 : 10) + std::min<size_t>(extra / 3, 20);
  const size_t coll_w = (gpus ? 6 : 14) + (extra - std::min<size_t>(extra / 3, 20));
  out.push_back(cell(" RANK", 5, true) + " " + cell("HOST", host_w) + " " + cell("PID", 7, true) + " " +
                cell("STATE", 10) + " " + cell("QUIET", 6, true) + " " + cell("RATE", 9, true) + " " +
                cell("COLLECTIVE", coll_w) + " " + cell("CPU%", 5, true) + " " + cell("RSS", 6, true) +
                (gpus ? " " + cell("GPU%", 4, true) + " " + cell("GMEM", 5, true) : ""));
  const int cursor = std::clamp(screen.cursor, 0, std::max(0, static_cast<int>(rows.size()) - 1));
  const int reserved =
      static_cast<int>(out.size()) + (screen.keys ? 1 : 0) + (screen.lines ? 8 : 0) + (screen.events.empty() ? 0 : 6);
  const int room = std::max(1, screen.height - reserved);
  const int first = std::clamp(cursor - room + 1, 0, std::max(0, static_cast<int>(rows.size()) - room));
  for (int i = first; i < static_cast<int>(rows.size()) && i < first + room; ++i) {
    const TopRow& row = rows[static_cast<size_t>(i)];
    const RankStatus& r = *row.rank;
    const std::string in =
        r.collective.empty() ? "" : fmt::format("{} {}", plain(r.collective), age(r.collective_seconds));
    std::string line = cell(std::to_string(r.rank), 5, true) + " " + cell(plain(row.machine->host), host_w) + " " +
                       cell(std::to_string(r.pid), 7, true) + " " + cell(row.state, 10) + " " +
                       cell(age(r.output_age), 6, true) + " " + cell(rate(row), 9, true) + " " + cell(in, coll_w) +
                       " " + cell(row.cpu_percent < 0 ? "-" : fmt::format("{:.0f}", row.cpu_percent), 5, true) + " " +
                       cell(r.running ? bytes(r.resident_bytes) : "-", 6, true);
    if (gpus) {
      line += " " + cell(r.gpu_percent < 0 ? "-" : std::to_string(r.gpu_percent), 4, true) + " " +
              cell(r.gpu < 0 ? "-" : bytes(r.gpu_bytes), 5, true);
    }
    out.push_back(screen.keys && i == cursor ? "\x1b[7m" + fit(line, width) + "\x1b[0m" : fit(line, width));
  }
  if (screen.lines && !rows.empty()) {
    const RankStatus& r = *rows[static_cast<size_t>(cursor)].rank;
    out.push_back(fmt::format("-- rank {}'s last lines --", r.rank));
    const size_t from = r.lines.size() > 7 ? r.lines.size() - 7 : 0;
    for (size_t i = from; i < r.lines.size(); ++i) out.push_back(fit("  " + plain(r.lines[i]), width));
    if (r.lines.empty()) out.push_back("  (nothing yet)");
  }
  if (!screen.events.empty()) {
    out.push_back("-- the job's last events --");
    const size_t from = screen.events.size() > 5 ? screen.events.size() - 5 : 0;
    for (size_t i = from; i < screen.events.size(); ++i) out.push_back(fit("  " + screen.events[i], width));
  }
  if (screen.keys) out.push_back("q quit  s sort  up/down pick  enter its lines  e events");
  for (auto& line : out) line = fit(line, width);
  return out;
}

}  // namespace accel::launch::watch
