#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# numa_torch_probe.py MODES WORKERS ALLOWED GPUS|- - torch 2.15's own --numa-binding CPU sets
# (torch.numa.binding, unpatched) on the machine /sys shows, for check_numa_binding.py, which
# runs this under `unshare -m` with a fake tree bind-mounted over /sys/devices/system and
# /sys/bus/pci/devices. Only what has no fake there is replaced, in this process: the CUDA
# device count and properties (the tree's GPUs, by PCI address) and the launcher's affinity.
# MODES: comma-separated. Prints {MODE: {"workers": [{"cpus": "0-3"}, ...]} or {"error": "..."}}.
import json
import os
import sys
import types

import torch
from torch.numa import binding

modes, workers, allowed, gpus = sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3], sys.argv[4]
addresses = [] if gpus == "-" else gpus.split(",")


def properties(index):
    domain, bus, rest = addresses[index].split(":")
    return types.SimpleNamespace(pci_domain_id=int(domain, 16), pci_bus_id=int(bus, 16),
                                 pci_device_id=int(rest.split(".")[0], 16))


torch.cuda.is_available = lambda: True
torch.cuda.device_count = lambda: len(addresses)
torch.cuda.get_device_properties = properties
os.sched_getaffinity = lambda pid: binding._get_set_of_int_from_ranges_str(allowed)

def plan(mode):
    options = binding.NumaOptions(affinity_mode=binding.AffinityMode(mode))
    try:
        sets = [binding._get_logical_cpus_to_bind_to(device_index=i, numa_options=options) for i in range(workers)]
        return {"workers": [{"cpus": binding._get_ranges_str_from_ints(s)} for s in sets]}
    except Exception as e:  # noqa: BLE001 - torch's failure is the answer for that tree
        return {"error": f"{type(e).__name__}: {e}"}


print(json.dumps({mode: plan(mode) for mode in modes}))
