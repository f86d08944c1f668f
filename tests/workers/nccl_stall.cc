// SPDX-License-Identifier: Apache-2.0
#include "tests/workers/nccl_stall.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#ifdef ACCEL_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

namespace accel::test {

// Rank 0 holds its legacy default stream in a host function, as a rank stuck in a kernel would,
// so the barrier queued after it makes no progress on any rank; the NCCL watchdog must fail it
// within the timeout. A rescue releases the stream 20 s after the timeout so that a watchdog
// that misses it (or an abort that waits for the stream) ends in a message, not a hang.
int ncclStall(Accelerator& acc, int timeout_s) {
  if (acc.device().type != DeviceType::CUDA) {
    std::cerr << "skipped: no CUDA device is visible" << std::endl;
    return 77;
  }
#ifdef ACCEL_HAVE_NCCL
  Backend& nccl = acc.deviceProcessGroup().backend();
  nccl.barrier()->wait();  // the communicator works before the stall
  static std::atomic<bool> released{false};
  if (acc.processIndex() == 0) {
    cudaLaunchHostFunc(
        nullptr,
        [](void*) {
          while (!released) ::usleep(1000);
        },
        nullptr);
  }
  std::thread rescue([timeout_s] {
    for (int i = 0; i < (timeout_s + 20) * 10 && !released; ++i) ::usleep(100000);
    if (!released) std::cout << "rescue: no error 20 s after the timeout; the stream is released" << std::endl;
    released = true;
  });
  const auto start = std::chrono::steady_clock::now();
  std::string outcome = "no error";
  try {
    nccl.barrier()->wait();
  } catch (const std::exception& e) {
    outcome = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << (outcome == "no error" ? "no error after " : "error after ") << seconds << " s: " << outcome
            << std::endl;
  released = true;
  rescue.join();
  std::_Exit(outcome == "no error" ? 0 : 3);  // the aborted communicator is not torn down again
#else
  (void)timeout_s;
  return 77;
#endif
}

}  // namespace accel::test
