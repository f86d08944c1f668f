// SPDX-License-Identifier: Apache-2.0
// What `accel top` shows (lib/launch/watch/): a status through its JSON and back, refused where a
// field is wrong; rates from two views; a progress bar's own rate; the sorts; frames that fit 80
// columns and use more; a failed, a killed and an ended job as the screen says them.
#include <catch2/catch.hpp>

#include "lib/launch/watch/status_json.h"
#include "lib/launch/watch/top_frame.h"
#include "lib/launch/watch/top_model.h"

using namespace accel::launch::watch;

namespace {

RankStatus topRank(int rank, int pid, uint64_t collectives, double cpu) {
  RankStatus r;
  r.rank = rank;
  r.local_rank = rank % 2;
  r.pid = pid;
  r.running = true;
  r.collectives = collectives;
  r.cpu_seconds = cpu;
  r.resident_bytes = 300 << 20;
  r.output_age = 0.5;
  r.lines = {"epoch 1", "loss 0.25"};
  return r;
}

JobView twoMachines(uint64_t collectives, double cpu) {
  MachineStatus zero;
  zero.job = "accel-1";
  zero.host = "node-a";
  zero.decides = true;
  zero.world_size = 3;
  zero.machines = 2;
  zero.ranks = {topRank(0, 100, collectives, cpu), topRank(1, 101, collectives * 2, cpu * 2)};
  zero.ranks[1].progress = " 45%|████▌     | 45/100 [00:02<00:03, 19.92it/s]";
  MachineStatus one = zero;
  one.machine = 1;
  one.host = "node-b";
  one.decides = false;
  one.ranks = {topRank(2, 200, collectives, cpu)};
  return {{{zero, -1}, {one, 0.4}}, ""};
}

size_t columns(const std::string& line) {
  size_t n = 0;
  bool escape = false;
  for (unsigned char c : line) {
    if (c == 0x1b) escape = true;
    if (!escape && (c & 0xC0) != 0x80) ++n;
    if (escape && c == 'm') escape = false;
  }
  return n;
}

}  // namespace

TEST_CASE("top: a status through JSON and back, and a wrong field named", "[top][unit]") {
  const JobView view = twoMachines(10, 1.5);
  const JobView back = jobViewFromJson(jobViewJson(view));
  REQUIRE(back.machines.size() == 2);
  CHECK(back.machines[1].heard == 0.4);
  CHECK(back.machines[1].status.host == "node-b");
  const RankStatus& r = back.machines[0].status.ranks[1];
  CHECK(r.collectives == 20);
  CHECK(r.progress == view.machines[0].status.ranks[1].progress);
  CHECK(r.lines == std::vector<std::string>{"epoch 1", "loss 0.25"});
  CHECK_FALSE(r.exit_code);
  auto j = statusJson(view.machines[0].status);
  j["ranks"][0]["pid"] = "x";
  CHECK_THROWS_WITH(statusFromJson(j), Catch::Contains("'pid'"));
  j = statusJson(view.machines[0].status);
  j["ranks"] = 5;
  CHECK_THROWS_WITH(statusFromJson(j), Catch::Contains("'ranks'"));
  CHECK_THROWS_AS(jobViewFromJson("not json"), StatusError);
}

TEST_CASE("top: a progress bar's own rate", "[top][unit]") {
  CHECK(barRate(" 45%|████▌     | 45/100 [00:02<00:03, 19.92it/s]") == "19.92it/s");
  CHECK(barRate("train:  3/10 [00:07<00:16,  2.31s/it]") == "2.31s/it");
  CHECK(barRate("no bar here") == "");
  CHECK(iterationsPerSecond("2.0s/it") == 0.5);
  CHECK(iterationsPerSecond("19.5it/s") == 19.5);
}

TEST_CASE("top: rates from two views, a restarted rank unknown, sorts", "[top][unit]") {
  TopModel model;
  model.update(twoMachines(100, 1.0), 10);
  for (const auto& row : model.rows(TopSort::Rank)) CHECK(row.collectives_per_s < 0);  // one view: not known
  JobView later = twoMachines(600, 1.5);
  later.machines[1].status.ranks[0].pid = 999;  // rank 2 restarted
  model.update(later, 11);
  const auto rows = model.rows(TopSort::Rank);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].collectives_per_s == Approx(500));
  CHECK(rows[0].cpu_percent == Approx(50));
  CHECK(rows[1].collectives_per_s == Approx(1000));
  CHECK(rows[1].bar_rate == "19.92it/s");
  CHECK(rows[2].collectives_per_s < 0);
  CHECK(model.throughput().back() == Approx(1500));
  CHECK(std::string(model.throughputUnit()) == "collectives/s");
  CHECK(model.rows(TopSort::Cpu)[0].rank->rank == 1);  // the busiest first
  CHECK(model.json()["ranks"][2]["collectives_per_second"].is_null());
}

TEST_CASE("top: frames fit 80 columns, use wider ones, and say how ranks ended", "[top][unit]") {
  TopModel model;
  model.update(twoMachines(100, 1.0), 10);
  JobView ended = twoMachines(200, 2.0);
  MachineStatus& zero = ended.machines[0].status;
  zero.ranks[0].running = false;
  zero.ranks[0].exit_code = 3;
  zero.ranks[1].running = false;
  zero.ranks[1].exit_code = 128 + 9;
  zero.ended = true;
  zero.exit_code = 3;
  zero.verdict = "failed";
  model.update(ended, 11);
  TopScreen screen;
  screen.lines = true;
  const auto narrow = topFrame(model, screen);
  for (const auto& line : narrow) CHECK(columns(line) <= 80);
  const std::string all = [&] {
    std::string s;
    for (const auto& line : narrow) s += line + "\n";
    return s;
  }();
  CHECK(all.find("ENDED failed (exit 3)") != std::string::npos);
  CHECK(all.find("failed 3") != std::string::npos);
  CHECK(all.find("SIGKILL") != std::string::npos);
  CHECK(all.find("1 node-b heard 0.4s ago") != std::string::npos);
  CHECK(all.find("rank 0's last lines") != std::string::npos);
  CHECK(all.find("loss 0.25") != std::string::npos);
  CHECK(all.find("q quit") != std::string::npos);
  screen.width = 140;
  const auto wide = topFrame(model, screen);
  size_t widest = 0;
  for (const auto& line : wide) widest = std::max(widest, columns(line));
  CHECK(widest > 80);
  CHECK(widest <= 140);
  CHECK(sparkline({0, 1, 2}, 10) == "▁▅█");
  CHECK(sparkline({0, 1, 2}, 2) == "▅█");  // the last ones, scaled to the largest shown
}
