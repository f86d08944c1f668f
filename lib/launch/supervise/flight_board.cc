// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/flight_board.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/temporary_folder.h"
#include "lib/launch/flight/torch_hook.h"
#include "lib/launch/plan/worker_env.h"

namespace accel::launch::supervise {

FlightBoard::~FlightBoard() {
  std::error_code ec;
  if (!hook_.empty()) std::filesystem::remove_all(hook_, ec);
}

std::string FlightBoard::open(const plan::LaunchPlan& plan) {
  if (plan.flight_entries <= 0) return "";
  size_t slots = 0;
  for (const auto& w : plan.workers) {
    if (w.label.empty()) slots = std::max(slots, static_cast<size_t>(w.local_rank) + 1);
  }
  if (slots == 0) return "";  // mpirun runs the ranks
  ring_ = accel::flight::ringBytes(static_cast<uint32_t>(plan.flight_entries));
  // The pages are only ever touched by the workers that record: a Python job costs nothing.
  if (const std::string why = memory_.open("accel-flight", slots * ring_); !why.empty()) {
    return fmt::format("warning: no flight recorder ({}): a stop cannot say which collective each rank was in", why);
  }
  if (!plan.torch_flight) return "";
  try {
    hook_ = makeTemporaryFolder("accel-fr-");
    writeFileAtomic(hook_ + "/sitecustomize.py", flight::kTorchHook);
  } catch (const Error& e) {
    return fmt::format("warning: no flight records from the Python workers: {}", e.what());
  }
  return "";
}

void FlightBoard::newRound() const {
  if (hook_.empty()) return;
  const std::string prefix = std::filesystem::path(plan::torchDumpPrefix(hook_)).filename();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(hook_, ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) std::filesystem::remove(entry.path(), ec);
  }
}

std::optional<accel::flight::Dump> FlightBoard::read(const WorkerProcess& w) const {
  if (!w.spec || !w.spec->label.empty() || w.pid <= 0) return std::nullopt;
  auto dump = read(w.spec->local_rank);
  if (!dump || dump->pid != w.pid) return std::nullopt;
  return dump;
}

std::vector<flight::TorchRank> FlightBoard::torchRanks(const std::vector<WorkerProcess>& workers,
                                                       const plan::LaunchPlan& plan) const {
  std::vector<flight::TorchRank> ranks;
  if (!plan.torch_flight || hook_.empty()) return ranks;
  for (const auto& w : workers) {
    if (w.running && w.spec && w.spec->label.empty()) {
      ranks.push_back({w.spec->rank, w.pid, plan::flightSocket(hook_, w.spec->local_rank), plan.torch_nccl});
    }
  }
  return ranks;
}

std::optional<accel::flight::Dump> FlightBoard::read(int local_rank) const {
  if (!memory_.data() || local_rank < 0 || static_cast<size_t>(local_rank + 1) * ring_ > memory_.size()) {
    return std::nullopt;
  }
  return accel::flight::readFlight(memory_.data() + static_cast<size_t>(local_rank) * ring_, ring_);
}

}  // namespace accel::launch::supervise
