#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# probe_worker.py OUT_DIR - the worker of check_launch_parity.py, started once by `accel launch`
# and once by `accelerate launch`: writes OUT_DIR/env-RANK.json (the whole environment it was
# given, before anything is imported) and OUT_DIR/state-RANK.json (what Accelerate's
# Accelerator() built from that environment: AcceleratorState, its plugins, gradient
# accumulation; or the exception it raised, which must then be the same under both launchers).
import json
import os
import re
import sys

out_dir = sys.argv[1]
rank = os.environ.get("RANK") or os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("PMI_RANK") or "0"
with open(os.path.join(out_dir, f"env-{rank}.json"), "w") as f:
    json.dump(dict(os.environ), f, indent=1, sort_keys=True)

import dataclasses  # noqa: E402  (the environment is written first, untouched by imports)
import enum  # noqa: E402


def plain(value, depth=0):
    """A JSON-able form of a plugin or value; object addresses dropped (they differ every run)."""
    if depth > 6:
        return "..."
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name, None), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return str(value)
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v, depth + 1) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return re.sub(r" at 0x[0-9a-f]+", "", str(value))


def state():
    from accelerate import Accelerator

    accelerator = Accelerator()
    s = accelerator.state
    return {
        "distributed_type": str(s.distributed_type),
        "backend": s.backend,
        "device": str(s.device),
        "debug": s.debug,
        "use_cpu": getattr(s, "use_cpu", None),
        "num_processes": s.num_processes,
        "process_index": s.process_index,
        "local_process_index": s.local_process_index,
        "is_main_process": accelerator.is_main_process,
        "mixed_precision": s.mixed_precision,
        "gradient_accumulation_steps": accelerator.gradient_accumulation_steps,
        "native_amp": accelerator.native_amp,
        "fp8_enabled": accelerator.fp8_enabled,
        "dynamo_plugin": plain(s.dynamo_plugin),
        "fsdp_plugin": plain(getattr(s, "fsdp_plugin", None)),
        "deepspeed_plugin": plain(getattr(s, "deepspeed_plugin", None)),
        "megatron_lm_plugin": plain(getattr(s, "megatron_lm_plugin", None)),
        "parallelism_config": plain(getattr(s, "parallelism_config", None)),
        "torch_tp_plugin": plain(getattr(s, "torch_tp_plugin", None)),
    }


try:
    result = state()
except Exception as e:  # noqa: BLE001 - the same failure under both launchers is parity too
    result = {"exception": f"{type(e).__name__}: {re.sub(r' at 0x[0-9a-f]+', '', str(e))}"}
with open(os.path.join(out_dir, f"state-{rank}.json"), "w") as f:
    json.dump(result, f, indent=1, sort_keys=True, default=str)
