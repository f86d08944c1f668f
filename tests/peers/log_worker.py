#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# log_worker.py - a worker for check_log_layout.py: one line to stdout and one to stderr, each
# naming its rank, so the launchers' prefixes and log files can be compared line by line.
import os
import sys

rank = os.environ.get("RANK", "?")
print(f"hello from rank {rank}", flush=True)
print(f"warning from rank {rank}", file=sys.stderr, flush=True)
