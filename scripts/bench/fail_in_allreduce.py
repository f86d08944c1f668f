#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# fail_in_allreduce.py FAIL_RANK STAMP TAG - a torch.distributed (Gloo) worker for
# scripts/bench_cluster: every rank all-reduces 4 KiB in a loop; 1 s after the first barrier
# FAIL_RANK writes the wall-clock time to STAMP and exits 7. What the other ranks then do (Gloo's
# error when a peer's sockets close, or the launcher stopping them) is what the bench measures.
# TAG only marks the processes of one trial, so the bench can tell when the last one is gone.
# Written for Debian's python3-torch 1.13 (/usr/bin/python3); runs under accel and torchrun.
import os
import sys
import time

import torch
import torch.distributed as dist

fail_rank, stamp = int(sys.argv[1]), sys.argv[2]
dist.init_process_group("gloo")
rank = dist.get_rank()
data = torch.ones(1024)
dist.barrier()
start = time.time()
while True:
    if rank == fail_rank and time.time() - start > 1.0:
        with open(stamp, "w") as f:
            f.write(f"{time.time():.6f}\n")
        os._exit(7)
    dist.all_reduce(data)
    time.sleep(0.01)
