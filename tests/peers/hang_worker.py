# SPDX-License-Identifier: Apache-2.0
# hang_worker.py - a job that hangs the usual way, for check_stacks.py: rank 1 never leaves its
# loop, so rank 0 waits in dist.all_reduce for it. Each says "ready" first.
import time

import torch
import torch.distributed as dist


def spin():
    while True:
        time.sleep(0.05)


def step():
    t = torch.ones(4)
    dist.all_reduce(t)


dist.init_process_group("gloo")
print(f"rank {dist.get_rank()} ready", flush=True)
if dist.get_rank() == 1:
    spin()
step()
