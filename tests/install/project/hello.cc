// SPDX-License-Identifier: Apache-2.0
// The smallest worker a user writes: meet the other ranks, sum one number, print on each rank.
#include <iostream>
#include <vector>

#include "runtime/state/accelerator.h"

int main() {
  accel::Accelerator acc;
  std::vector<int> one = {1};
  acc.reduce(one);
  std::cout << "hello from rank " << acc.processIndex() << " of " << one[0] << std::endl;
  return one[0] == acc.numProcesses() ? 0 : 1;
}
