// SPDX-License-Identifier: Apache-2.0
// This machine's place in a job that a hostfile head starts (lib/launch/fleet): the head chose
// it from the hostfile and sends it in its orders (fleet/head_orders.h), typed. It outranks
// every other source of placement on this machine (launch_settings.h).
#pragma once

#include <string>

namespace accel::launch::settings {

struct HeadPlace {
  std::string host;  // this machine's name in the hostfile: the label of its output
  int machine_rank = 0;
  int num_machines = 1;
  std::string main_addr;  // machine 0's address, as every host can reach it
  int main_port = 0;
  int procs = 1;        // this machine's processes
  std::string gpu_ids;  // the slots it runs, as gpu_ids; "" for its own GPUs from 0
  std::string token;    // the job's store token
  std::string run_id;
  bool operator==(const HeadPlace&) const = default;
};

}  // namespace accel::launch::settings
