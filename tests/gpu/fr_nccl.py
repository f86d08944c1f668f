#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# fr_nccl.py MODE - torch's NCCL flight recorder under accel launch, for scripts/gpu/checks.sh
# check_flight. Three all_reduces on the rank's GPU, then by MODE:
#   pipe  write to the rank's dump pipe (TORCH_NCCL_DEBUG_INFO_PIPE_FILE + rank, accel's) and wait
#         up to 20 s for torch's dump file (TORCH_FR_DUMP_TEMP_FILE + rank, accel's); print its
#         size; then hang (sleep), so that --hang_timeout stops the job and reads the record
#   skip  the last rank skips the fourth all_reduce and sleeps: the others' watchdog times out,
#         dumps (TORCH_NCCL_DUMP_ON_TIMEOUT, accel's) and ends them
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

mode = sys.argv[1]
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=15))
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
t = torch.ones(1024, device="cuda")
for _ in range(3):
    dist.all_reduce(t)
torch.cuda.synchronize()
print(f"rank {rank} did 3", flush=True)
if mode == "pipe":
    pipe = os.environ.get("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "")
    dump = os.environ.get("TORCH_FR_DUMP_TEMP_FILE", "")
    print(f"rank {rank} pipe={'set' if pipe else 'unset'} dump={'set' if dump else 'unset'}", flush=True)
    if pipe and dump:
        deadline = time.monotonic() + 20
        while not os.path.exists(pipe + str(rank)) and time.monotonic() < deadline:
            time.sleep(0.1)
        with open(pipe + str(rank), "w") as f:
            f.write("1\n")
        while not os.path.exists(dump + str(rank)) and time.monotonic() < deadline:
            time.sleep(0.1)
        size = os.path.getsize(dump + str(rank)) if os.path.exists(dump + str(rank)) else -1
        print(f"rank {rank} pipe dump bytes={size}", flush=True)
    while True:
        time.sleep(1)
if mode == "skip" and rank == world - 1:
    while True:
        time.sleep(1)
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"rank {rank} did 4", flush=True)
