// SPDX-License-Identifier: Apache-2.0
// The one line a stack becomes (lib/launch/stacks/stack_summary.h), from what py-spy, gdb and
// eu-stack really print, and the choice of a job (running_jobs.h) with every refusal.
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/launch/stacks/running_jobs.h"
#include "lib/launch/stacks/stack_summary.h"
#include "tests/support/errors.h"

using namespace accel;
using namespace accel::launch::stacks;

namespace {
// The message of the UsageError selectJob throws.
std::string refusal(const std::vector<RunningJob>& jobs, const std::string& selector) {
  return accel::test::usageError([&] { selectJob(jobs, selector); }).what();
}
}  // namespace

TEST_CASE("stack summary: py-spy's main thread, innermost frame and the script's frame", "[stacks]") {
  const std::string dump =
      "Process 10602: /usr/bin/python3 -u /tmp/w/hang.py\n"
      "Python v3.11.2 (/usr/bin/python3.11)\n\n"
      "Thread 10610 (idle): \"Thread-1\"\n"
      "    wait (threading.py:320)\n"
      "Thread 10602 (idle): \"MainThread\"\n"
      "    all_reduce (torch/distributed/distributed_c10d.py:1541)\n"
      "    wrapper (torch/distributed/c10d_logger.py:83)\n"
      "    step (hang.py:7)\n"
      "    <module> (hang.py:12)\n";
  CHECK(summarizePythonStack(dump) == "all_reduce (torch/distributed/distributed_c10d.py:1541) from step (hang.py:7)");
  CHECK(summarizePythonStack("Thread 9 (idle): \"MainThread\"\n    spin (stuck.py:4)\n    <module> (stuck.py:5)\n") ==
        "spin (stuck.py:4)");
  CHECK(summarizePythonStack("Thread 9 (active): \"worker\"\n    run (pkg/mod.py:3)\n") == "run (pkg/mod.py:3)");
  CHECK(summarizePythonStack("Error: Failed to find python version from target process\n").empty());
}

TEST_CASE("stack summary: gdb's thread 1, its innermost frame outside the C library, and the collective", "[stacks]") {
  const std::string bt =
      "Thread 2 (Thread 0x7f8a668886c0 (LWP 27182) \"runtime_worker\"):\n"
      "#0  __futex_abstimed_wait_common64 (private=0) at ./nptl/futex-internal.c:57\n"
      "#6  accel::OpQueue::loop () at /src/runtime/comm/op_queue.cc:77\n"
      "Thread 1 (Thread 0x7f8a67425740 (LWP 27180) \"runtime_worker\"):\n"
      "#0  syscall () at ../sysdeps/unix/sysv/linux/x86_64/syscall.S:38\n"
      "#1  0x00007f8a675f2a97 in futexWait () at /src/runtime/comm/shm_steps.cc:40\n"
      "#2  accel::ShmSteps::waitFor () at /src/runtime/comm/shm_steps.cc:106\n"
      "[Inferior 1 (process 27180) detached]\n"
      "accel collective: in #6 all_reduce (f32 x 1000) sum, shm rank 1 of 4\n";
  CHECK(summarizeNativeStack(bt) ==
        "futexWait (/src/runtime/comm/shm_steps.cc:40); in #6 all_reduce (f32 x 1000) sum, shm rank 1 of 4");
  // An unoptimized build: a function of an anonymous namespace, not inlined, and templates.
  CHECK(summarizeNativeStack(
            "Thread 1 (Thread 0x7f6c (LWP 24917) \"runtime_worker\"):\n"
            "#0  0x00007f6cb84a in __GI___clock_nanosleep (clock_id=0) at ../sysdeps/clock_nanosleep.c:78\n"
            "#5  0x00007f6cb96c8da0 in std::condition_variable::wait<accel::OpQueue::loop()::<lambda()> > "
            "(this=0x616) at /usr/include/c++/12/condition_variable:102\n"
            "#23 0x00005589d10fc8c6 in (anonymous namespace)::freeze (acc=..., frozen=0) at "
            "/src/tests/workers/runtime_worker.cc:150\n"
            "#24 0x00005589d10fd0b1 in main (argc=3, argv=0x7ffd) at /src/tests/workers/runtime_worker.cc:276\n") ==
        "freeze (/src/tests/workers/runtime_worker.cc:150)");
  // A program without libaccel_runtime, and one without line tables.
  CHECK(summarizeNativeStack("#0  0x00007f in __GI___nanosleep (req=0x7ff) at ../sysdeps/nanosleep.c:25\n"
                             "#1  0x000055 in ?? ()\n") == "__GI___nanosleep");
  CHECK(summarizeNativeStack("#0  0x00007fdc in clock_nanosleep () from /lib/x86_64-linux-gnu/libc.so.6\n"
                             "accel collective: \n") == "clock_nanosleep");
  // eu-stack's format.
  CHECK(summarizeNativeStack("PID 4242 - process\nTID 4242:\n#0  0x00007f2b5c0e4e53 __nanosleep\n"
                             "#1  0x000055d0a6e0f4af\n") == "__nanosleep");
  CHECK(summarizeNativeStack("ptrace: Operation not permitted.\n").empty());
}

TEST_CASE("stacks: a job is chosen by its launcher's pid or run id, or as the only one", "[stacks]") {
  const std::vector<RunningJob> one = {{"accel-aa", 100, {{0, 101}, {1, 102}}, ""}};
  const std::vector<RunningJob> two = {one[0], {"accel-bb", 200, {{0, 201}}, ""}};
  CHECK(selectJob(one, "").launcher == 100);
  CHECK(selectJob(two, "200").run_id == "accel-bb");
  CHECK(selectJob(two, "accel-aa").launcher == 100);
  CHECK(refusal({}, "") == "no accel job is running on this machine (that this user may see)");
  CHECK(refusal(two, "") ==
        "several accel jobs are running: run accel-aa (launcher pid 100, 2 rank(s) here); run accel-bb (launcher "
        "pid 200, 1 rank(s) here)");
  CHECK(refusal(two, "accel-zz") == "no running job has run id 'accel-zz'");
  CHECK(refusal(two, "1").rfind("process 1 is not the launcher of a running job: it runs `", 0) == 0);
  CHECK(refusal(two, "2147483600") == "no process 2147483600 (that this user may see)");
}
