#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# make_trees.py - writes the fake sysfs trees beside it (checked in; run again after a change
# here): the files torch 2.15's torch/numa/binding.py and accel's facts/cpu_topology.h read, for
# machines laid out as real ones are (smaller, same shape). Each tree has machine.json: its GPUs'
# PCI addresses in CUDA order and the CPUs a launcher there may use (its affinity; a cgroup's
# cpuset shows there), which tests/unit/numa_binding_test.cc and tests/peers/check_numa_binding.py
# read.
#   two_socket_8gpu      2 Intel-style sockets, one NUMA node each, 8 cores x 2 threads each
#                        (siblings c and c+16), one L3 per socket, 4 GPUs per node
#   amd_nps2_ccx         1 AMD socket in NPS2 (2 nodes), 16 cores x 2 threads (siblings c and
#                        c+16), an L3 complex per 4 cores (2 per node); 3 GPUs on node 0, 1 on node 1
#   workstation          1 socket, 1 node, 8 cores without SMT, one L3; 2 GPUs
#   hyperthreads         1 socket, 1 node, 6 cores x 2 threads (siblings side by side: 0-1, 2-3, ...),
#                        4 GPUs
#   cgroup_restricted    the workstation's layout, the launcher allowed CPUs 2-5 only (its cgroup's
#                        cpuset.cpus.effective), a GPU whose numa_node is -1
#   no_numa              4 CPUs, no /sys/devices/system/node (a VM or kernel without NUMA)
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def ranges(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text + "\n")


def tree(name, nodes, socket_of, siblings_of, l3_of, gpus, allowed=None, numa=True, cgroup=None):
    """nodes: {node: [cpus]}; socket_of/siblings_of/l3_of: cpu -> value / set; gpus: [(pci, node)]."""
    root = os.path.join(HERE, name)
    shutil.rmtree(root, ignore_errors=True)
    cpus = sorted(c for cs in nodes.values() for c in cs)
    if numa:
        write(root, "devices/system/node/possible", ranges(nodes))
        for node, cs in nodes.items():
            write(root, f"devices/system/node/node{node}/cpulist", ranges(cs))
    for c in cpus:
        base = f"devices/system/cpu/cpu{c}"
        write(root, f"{base}/topology/physical_package_id", str(socket_of(c)))
        write(root, f"{base}/topology/thread_siblings_list", ranges(siblings_of(c)))
        for index, (kind, level, shared) in enumerate([("Data", 1, siblings_of(c)), ("Instruction", 1, siblings_of(c)),
                                                        ("Unified", 2, siblings_of(c)), ("Unified", 3, l3_of(c))]):
            write(root, f"{base}/cache/index{index}/type", kind)
            write(root, f"{base}/cache/index{index}/level", str(level))
            write(root, f"{base}/cache/index{index}/shared_cpu_list", ranges(shared))
    for pci, node in gpus:
        write(root, f"bus/pci/devices/{pci}/numa_node", str(node))
    if cgroup:
        write(root, "fs/cgroup/cpuset.cpus.effective", cgroup)
    with open(os.path.join(root, "machine.json"), "w") as f:
        json.dump({"gpus": [pci for pci, _ in gpus], "allowed": ranges(allowed if allowed is not None else cpus)},
                  f, indent=1)
        f.write("\n")


def main():
    # Two sockets: cpus 0-7 and 16-23 on socket 0 (node 0), 8-15 and 24-31 on socket 1 (node 1).
    tree("two_socket_8gpu", {0: [*range(0, 8), *range(16, 24)], 1: [*range(8, 16), *range(24, 32)]},
         socket_of=lambda c: (c % 16) // 8, siblings_of=lambda c: {c % 16, c % 16 + 16},
         l3_of=lambda c: {x for x in range(32) if (x % 16) // 8 == (c % 16) // 8},
         gpus=[("0000:18:00.0", 0), ("0000:2a:00.0", 0), ("0000:3a:00.0", 0), ("0000:5d:00.0", 0),
               ("0000:9a:00.0", 1), ("0000:ab:00.0", 1), ("0000:ba:00.0", 1), ("0000:db:00.0", 1)])
    # AMD NPS2: node 0 = cores 0-7 (+16-23), node 1 = cores 8-15 (+24-31); CCX = 4 cores.
    tree("amd_nps2_ccx", {0: [*range(0, 8), *range(16, 24)], 1: [*range(8, 16), *range(24, 32)]},
         socket_of=lambda c: 0, siblings_of=lambda c: {c % 16, c % 16 + 16},
         l3_of=lambda c: {x for x in range(32) if (x % 16) // 4 == (c % 16) // 4},
         gpus=[("0000:01:00.0", 0), ("0000:21:00.0", 0), ("0000:41:00.0", 0), ("0000:81:00.0", 1)])
    one = {0: list(range(8))}
    tree("workstation", one, socket_of=lambda c: 0, siblings_of=lambda c: {c}, l3_of=lambda c: set(range(8)),
         gpus=[("0000:01:00.0", 0), ("0000:02:00.0", 0)])
    tree("hyperthreads", {0: list(range(12))}, socket_of=lambda c: 0, siblings_of=lambda c: {c - c % 2, c - c % 2 + 1},
         l3_of=lambda c: set(range(12)),
         gpus=[("0000:17:00.0", 0), ("0000:31:00.0", 0), ("0000:b1:00.0", 0), ("0000:ca:00.0", 0)])
    tree("cgroup_restricted", one, socket_of=lambda c: 0, siblings_of=lambda c: {c}, l3_of=lambda c: set(range(8)),
         gpus=[("0000:01:00.0", 0), ("0000:02:00.0", -1)], allowed=[2, 3, 4, 5], cgroup="2-5")
    tree("no_numa", {0: list(range(4))}, socket_of=lambda c: 0, siblings_of=lambda c: {c},
         l3_of=lambda c: set(range(4)), gpus=[("0000:01:00.0", 0)], numa=False)


if __name__ == "__main__":
    main()
