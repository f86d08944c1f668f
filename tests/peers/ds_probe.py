#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# ds_probe.py OUT_DIR [ARGS...] - the worker of check_deepspeed_parity.py, started by the real
# `deepspeed` launcher and by `accel deepspeed`: writes OUT_DIR/env-RANK.json, the whole
# environment it was given and its arguments (DeepSpeed's --local_rank=N among them), after one
# line on stdout and one on stderr (what --enable_each_rank_log's files hold). Imports nothing but
# the standard library.
import json
import os
import sys

args = sys.argv[1:]
out_dir = next(a for a in args if not a.startswith("--local_rank"))
print(f"probe rank {os.environ.get('RANK', '0')} on stdout", flush=True)
print(f"probe rank {os.environ.get('RANK', '0')} on stderr", file=sys.stderr, flush=True)
with open(os.path.join(out_dir, f"env-{os.environ.get('RANK', '0')}.json"), "w") as f:
    json.dump({"env": dict(os.environ), "argv": [a.replace(out_dir, "<out>") for a in args]}, f, indent=1,
              sort_keys=True)
