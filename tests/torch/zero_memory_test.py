# SPDX-License-Identifier: Apache-2.0
"""A model that does not fit one process's memory under DDP trains under ZeRO-3 (issue 47's
"done when"): each rank of a world-2 `accel launch` in a memory cgroup of its own (v2 memory.max,
or v1 memory.limit_in_bytes; no swap), the launch configured by an Accelerate config file of the
tutorials' kind (DeepSpeed ZeRO-3, optimizer and parameters offloaded to the CPU).

The limit is measured here, not guessed: an uncapped DDP run and an uncapped ZeRO-3 run give
each rank's peak (the cgroup's own count: everything the rank's memory holds); the cap is half
way between them. Then DDP under the cap is killed by the kernel, and ZeRO-3 under it trains to
the same weights, bit for bit, as the uncapped DDP run (stage 3 at world 2 sums exactly as DDP
does; tests/torch/zero_torch_test.py shows the same against PyTorch's fully_shard).
Skipped (77), saying why, where cgroups cannot be made or written.
Usage: zero_memory_test.py ACCEL ZERO_WORKER"""
import os
import re
import subprocess
import sys
import tempfile

import torch_launch

ACCEL, WORKER = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="zero_memory.")
# 67 M parameters: DDP's model states (16 bytes a parameter, and its buckets) well above ZeRO-3's
# at world 2 (8 bytes and a few layers), whatever each rank's cgroup also counts (its share of
# the page cache of the libraries and files it touches first).
MODEL = ["--width", 2048, "--depth", 16, "--batch", 8, "--no-files", 1]
CONFIG = """compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  zero_stage: {stage}
  offload_optimizer_device: {offload}
  offload_param_device: {offload}
  gradient_accumulation_steps: 1
  zero3_init_flag: false
mixed_precision: 'no'
num_machines: 1
num_processes: 2
use_cpu: false
"""


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


class Cgroups:
    """One memory cgroup per local rank and run, v2 or v1, made here and removed at the end: a
    run's cgroups are new, so no earlier run's page cache is counted in them."""

    def __init__(self):
        self.v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
        self.root = "/sys/fs/cgroup" if self.v2 else "/sys/fs/cgroup/memory"
        self.made = []
        if not os.path.isdir(self.root):
            skip(f"no memory cgroup hierarchy at {self.root}")
        if self.v2 and "memory" not in open("/sys/fs/cgroup/cgroup.controllers").read().split():
            skip("cgroup v2 without the memory controller")
        try:
            self.fresh("probe")
        except OSError as e:
            self.remove()
            skip(f"cannot make or write a memory cgroup under {self.root}: {e}")

    def fresh(self, run, limit=None):
        """The base path of this run's cgroups (BASE_<local rank>), made with `limit` bytes."""
        base = os.path.join(self.root, f"accel_zero_{os.getpid()}_{run}")
        for r in (0, 1):
            os.mkdir(f"{base}_{r}")
            self.made.append(f"{base}_{r}")
            self.write(f"{base}_{r}", "memory.swap.max" if self.v2 else "memory.swappiness", "0")
            if limit is not None:
                self.write(f"{base}_{r}", "memory.max" if self.v2 else "memory.limit_in_bytes", str(limit))
        return base

    @staticmethod
    def write(path, name, value):
        with open(os.path.join(path, name), "w") as f:
            f.write(value)

    def peaks(self, base):
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        return [int(open(os.path.join(f"{base}_{r}", name)).read()) for r in (0, 1)]

    def remove(self):
        for path in reversed(self.made):
            if os.path.isdir(path):
                os.rmdir(path)


def train(cg, stage, limit=None, expect=0):
    config = os.path.join(TMP, f"stage{stage}.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(stage=stage, offload="cpu" if stage == 3 else "none"))
    base = cg.fresh(f"{stage}_{'capped' if limit else 'free'}", limit)
    enter = f'echo $$ > "{base}_$LOCAL_RANK/cgroup.procs" && exec "$@"'
    cmd = [ACCEL, "launch", "--config_file", config, "--main_process_port", "0", "sh", "-c", enter, "sh", WORKER,
           os.path.join(TMP, "out"), 2, "adamw", *MODEL]
    os.makedirs(os.path.join(TMP, "out"), exist_ok=True)
    job = subprocess.run([str(c) for c in cmd], env=torch_launch.ENV, capture_output=True, text=True, timeout=900)
    text = job.stdout + job.stderr
    if job.returncode != expect:
        sys.exit(f"FAIL: stage {stage} exited {job.returncode}, expected {expect}\n{text}")
    return text, cg.peaks(base)


def digests(text):
    return sorted(re.findall(r"digest rank (\d) ([0-9a-f]+)", text))


def main():
    cg = Cgroups()
    try:
        ddp_text, ddp = train(cg, 0)
        zero_text, zero = train(cg, 3)
        assert min(ddp) > 1.25 * max(zero), f"DDP's peaks {ddp} are not well above ZeRO-3's {zero}"
        cap = (min(ddp) + max(zero)) // 2
        killed, _ = train(cg, 0, cap, expect=137)
        assert "SIGKILL" in killed, killed
        capped_text, capped = train(cg, 3, cap)
        assert "offloading to the CPU changes nothing here" in capped_text, capped_text
        want = [d for _, d in digests(ddp_text)]
        assert len(set(want)) == 1 and [d for _, d in digests(capped_text)] == want, \
            f"ZeRO-3 under the cap: {digests(capped_text)}, DDP: {digests(ddp_text)}"
        mib = lambda v: f"{v / 2**20:.0f} MiB"
        print(f"ok: each rank capped at {mib(cap)} ({'memory.max' if cg.v2 else 'memory.limit_in_bytes'}): DDP (peaks "
              f"{', '.join(map(mib, ddp))} uncapped) killed by the kernel; ZeRO-3 with CPU offload from an Accelerate "
              f"DeepSpeed config trained (peaks {', '.join(map(mib, capped))}) to DDP's weights, bit for bit")
    finally:
        cg.remove()


if __name__ == "__main__":
    main()
