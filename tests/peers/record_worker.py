#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# record_worker.py - a worker whose entry point carries torch's @record: it joins a Gloo process
# group (which installs torch's `[rankN]: ` excepthook), then rank 1 raises. check_torchelastic.py
# runs it under accel launch and torchrun.
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    dist.init_process_group("gloo")
    dist.barrier()
    if dist.get_rank() == 1:
        raise RuntimeError("disk quota exceeded on rank 1")
    dist.barrier()  # rank 0 waits here until accel stops it


if __name__ == "__main__":
    main()
