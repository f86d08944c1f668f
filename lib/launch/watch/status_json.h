// SPDX-License-Identifier: Apache-2.0
// A launcher's status (job_status.h) as JSON, and the whole job's view that `accel top` reads:
// every machine's status as its launcher last sent it to machine 0, with how long ago.
//   machine -> machine 0: statusJson(MachineStatus), once a second (job channel "st")
//   launcher -> accel top: jobViewJson(JobView), the answer to "status" on its socket
// Readers trust nothing: a field of the wrong type, a list past its bound, or text that is no JSON
// object is refused with the field named (StatusError).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/launch/watch/job_status.h"

namespace accel::launch::watch {

class StatusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr size_t kMaxStatusRanks = 4096;  // one launcher's workers
inline constexpr size_t kMaxStatusMachines = 1 << 16;

nlohmann::json statusJson(const MachineStatus& s);
MachineStatus statusFromJson(const nlohmann::json& j);  // throws StatusError

// The job as one launcher sees it: machine 0's status first (the job's round, restarts, …), then
// each other machine's, `heard` seconds after its launcher last sent it (-1: this launcher's own).
struct MachineView {
  MachineStatus status;
  double heard = -1;
};
struct JobView {
  std::vector<MachineView> machines;  // by machine rank
  std::string note;                   // what is missing ("machine 2 has sent no status yet")
};

std::string jobViewJson(const JobView& view);

// The same texts cut to at most `max` bytes where they are longer: first the ranks' last lines go,
// then their progress and collectives, then (a view) the other machines' ranks, then ranks from
// the end; a view's note says it was cut.
std::string fittedStatusJson(MachineStatus status, size_t max);
std::string fittedJobViewJson(JobView view, size_t max);
JobView jobViewFromJson(const std::string& text);  // throws StatusError

}  // namespace accel::launch::watch
