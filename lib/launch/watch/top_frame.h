// SPDX-License-Identifier: Apache-2.0
// One screen of `accel top` as text lines (top_model.h): the job's line (round, restarts, world,
// machines, elapsed), its throughput over time as a sparkline, each machine's link, then a row
// per rank (host, pid, state, seconds since its last output, rate, the collective it is in and
// for how long, CPU %, resident memory), the picked rank's last lines or the job's last events,
// and the keys. Every line fits `width` columns; at 80 the narrowest columns, wider screens
// widen the host and the collective. The same lines are `accel top --once`.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/watch/top_model.h"

namespace accel::launch::watch {

struct TopScreen {
  int width = 80;
  int height = 24;
  TopSort sort = TopSort::Rank;
  int cursor = 0;                   // the picked row, in the sorted order
  bool lines = false;               // show the picked rank's last lines
  bool keys = true;                 // the keys' line (not in --once)
  std::vector<std::string> events;  // the job's last events to show (accel top's `e`), newest last
};

std::vector<std::string> topFrame(const TopModel& model, const TopScreen& screen);

// "▁▂▃▅▇" for `values`, scaled to their largest, the last `columns` of them.
std::string sparkline(const std::deque<double>& values, size_t columns);

}  // namespace accel::launch::watch
