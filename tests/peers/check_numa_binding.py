#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_numa_binding.py - accel's --numa-binding CPU sets are torch 2.15's: for every tree of
# tests/fakes/sysfs, every mode, one worker per GPU (and cases with a narrower launcher
# affinity), torch.numa.binding's own functions (numa_torch_probe.py, run under `unshare -m`
# with the tree bind-mounted over /sys) and accel's plan (the numa_plan test program, reading
# the same tree) give each worker the same CPUs. Where torch fails the launch, accel's plan
# must bind what it can and say why in a note: those cases are listed below with their reason.
# Needs root (a mount namespace); elsewhere it says it is skipped, and why.
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary). Exit 1 on a miss.
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
NUMA_PLAN = os.path.join(os.path.dirname(ACCEL), "numa_plan")  # built beside accel (build/bin)
TREES = os.path.join(ROOT, "tests", "fakes", "sysfs")
PROBE = os.path.join(ROOT, "tests", "peers", "numa_torch_probe.py")
MODES = ["node", "socket", "exclusive", "core-complex"]

# (tree, allowed CPUs or None for machine.json's): where torch fails and accel binds what it
# can. The reason, keyed by (tree, allowed, mode); None: every mode.
CASES = [(name, None) for name in sorted(os.listdir(TREES)) if os.path.isdir(os.path.join(TREES, name))]
CASES += [("two_socket_8gpu", "0-7,16-23"), ("amd_nps2_ccx", "0,2-31"), ("hyperthreads", "0-5")]
TORCH_FAILS = {
    ("no_numa", None, None): "no /sys/devices/system/node: torch fails reading a cpulist; accel runs unpinned, "
                             "with a note",
    ("two_socket_8gpu", "0-7,16-23", None): "node 1 has no allowed CPU: torch fails (min() of an empty set, or no "
                                            "CPUs to bind); accel runs node 1's workers unpinned, with a note",
    ("hyperthreads", "0-5", "exclusive"): "3 allowed cores for 4 GPUs: torch refuses; accel shares them round robin, "
                                          "with a note",
}


def torch_plans(tree, workers, allowed, gpus):
    """{mode: torch's plan} for every mode, from one probe (one import of torch)."""
    mounts = (f"mount --bind {tree}/devices/system /sys/devices/system && "
              f"mount --bind {tree}/bus/pci/devices /sys/bus/pci/devices && exec \"$@\"")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", mounts, "sh",
                        sys.executable, PROBE, ",".join(MODES), str(workers), allowed, gpus or "-"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return {mode: {"error": f"probe exited {r.returncode}: {r.stderr.strip()[-500:]}"} for mode in MODES}
    return json.loads(r.stdout.strip().splitlines()[-1])


def accel_plan(tree, mode, workers, allowed, gpus):
    r = subprocess.run([NUMA_PLAN, tree, mode, str(workers), allowed, gpus or "-"], capture_output=True, text=True,
                       timeout=60)
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr}


def main():
    if os.geteuid() != 0:
        print("skipped: check_numa_binding.py needs root for its mount namespace (unshare -m); accel's plans on the "
              "same trees are checked by tests/unit/numa_binding_test.cc")
        return 0
    failed = compared = 0
    seen = set()
    for name, allowed in CASES:
        tree = os.path.join(TREES, name)
        with open(os.path.join(tree, "machine.json")) as f:
            machine = json.load(f)
        allowed_text = allowed if allowed is not None else machine["allowed"]
        gpus = ",".join(machine["gpus"])
        plans = torch_plans(tree, len(machine["gpus"]), allowed_text, gpus)
        for mode in MODES:
            theirs = plans[mode]
            ours = accel_plan(tree, mode, len(machine["gpus"]), allowed_text, gpus)
            reason = TORCH_FAILS.get((name, allowed, mode)) or TORCH_FAILS.get((name, allowed, None))
            ours_cpus = [w["cpus"] for w in ours.get("workers", [])]
            if "error" in theirs and reason and ours.get("notes"):
                seen.add((name, allowed, mode if (name, allowed, mode) in TORCH_FAILS else None))
                print(f"ok   {name} {mode} (allowed {allowed_text}): torch fails ({theirs['error'][:80]}); accel "
                      f"{ours_cpus}, noting: {ours['notes'][0][:100]}")
                continue
            same = "error" not in theirs and [w["cpus"] for w in theirs["workers"]] == ours_cpus
            compared += same
            failed += not same
            print(f"{'ok  ' if same else 'FAIL'} {name} {mode} (allowed {allowed_text}): "
                  f"{'same CPU sets for ' + str(len(ours_cpus)) + ' workers' if same else ''}")
            if not same:
                print(f"       torch: {theirs}\n       accel: {ours}")
    for key in TORCH_FAILS:
        if key not in seen:
            print(f"FAIL listed case {key} no longer differs: remove it from TORCH_FAILS")
            failed += 1
    print(f"NUMA binding parity: {compared} plans the same as torch 2.15's, {len(seen)} listed cases where torch "
          f"fails, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
