#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# env_probe.py OUT_DIR - the worker of check_torchrun_parity.py, started once by real torchrun
# and once by `accel torchrun`: writes OUT_DIR/env-RANK.json, the whole environment it was given
# (a worker without RANK writes rank 0's file). Imports nothing but the standard library.
import json
import os
import sys

out_dir = sys.argv[1]
with open(os.path.join(out_dir, f"env-{os.environ.get('RANK', '0')}.json"), "w") as f:
    json.dump(dict(os.environ), f, indent=1, sort_keys=True)
