// SPDX-License-Identifier: Apache-2.0
// child_report: what a child process started by accel was set up with, one line each on
// stdout: its blocked and ignored signals as /proc/self/status lists them (SigBlk, SigIgn), its
// parent-death signal (prctl PR_GET_PDEATHSIG), and whether it leads its own process group.
// tests/unit/child_setup_test.cc starts it as every kind of child (lib/common/process/child.h).
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

int main() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigIgn:", 0) == 0) std::printf("%s\n", line.c_str());
  }
  int death = 0;
  ::prctl(PR_GET_PDEATHSIG, &death, 0, 0, 0);
  std::printf("PDeathSig: %d\n", death);
  std::printf("OwnGroup: %d\n", ::getpgid(0) == ::getpid() ? 1 : 0);
  return 0;
}
