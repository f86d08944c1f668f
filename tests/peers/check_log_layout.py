#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_log_layout.py - accel's worker output against torch 2.15's torchrun: with the same
# log line prefix template (the flag, then TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE) every line of a
# worker carries the same prefix, and --log_dir lays out the same files with the same contents
# (DIR/<run id>_<random>/attempt_0/<local rank>/stdout.log, stderr.log). torchrun prefixes and
# writes only the streams --tee names, so it runs with --tee 3. With --duplicate_stdout_filters and
# --duplicate_stderr_filters, attempt_0's filtered_stdout.log and filtered_stderr.log hold the same
# lines after the same headers (their order across ranks is the threads' in torchrun, so lines are
# compared sorted). Run by scripts/peers in the peers' virtual environment (ACCEL: the binary).
import os
import re
import shutil
import socket
import sys
import tempfile

import process_group

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.path.join(ROOT, "tests", "peers", "log_worker.py")
TEMPLATE = "${role_name}|${rank}|$local_rank|${hostname}$$ "
VARIABLE = "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"


def free_port():
    with socket.socket() as s:  # torchrun's --master_port 0 hangs its static rendezvous (torch 2.15)
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def launch(who, args, env, log_dir):
    """(exit code, {line without its prefix: prefix} of the console, {relative path: content})."""
    common = ["--role", "trainer", "--log_dir", log_dir, *args]
    if who == "accel":
        command = [ACCEL, "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0", *common, WORKER]
    else:
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
                   free_port(), "--tee", "3", *common, WORKER]
    code, out, err = process_group.run(command, 300, env=env)
    prefixes = {}
    for line in (out + err).splitlines():
        m = re.fullmatch(r"(.*?)((hello|warning) from rank \d)", line)
        if m:
            prefixes[m.group(2)] = m.group(1)
    return code, prefixes, read_logs(log_dir), out + err


def read_logs(log_dir):
    """Every file under the launch's one folder, by its path below that folder."""
    runs = os.listdir(log_dir)
    if len(runs) != 1 or not re.fullmatch(r".+_[a-z0-9_]{8}", runs[0]):
        return {"<folders in DIR>": " ".join(sorted(runs))}
    files = {}
    for folder, _, names in os.walk(os.path.join(log_dir, runs[0])):
        for name in names:
            if name == "events.jsonl":  # accel's event log (docs/watch.md): torchrun writes none
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                text = f.read()
            if name.startswith("filtered_"):  # ranks' lines interleave as each launcher reads them
                text = "".join(sorted(text.splitlines(keepends=True)))
            files[os.path.relpath(path, os.path.join(log_dir, runs[0]))] = text
    return files


def compare(what, env, args, tmp, files=4, prefixes=True):
    results = {who: launch(who, args, env, os.path.join(tmp, what.replace(" ", "-"), who))
               for who in ("torchrun", "accel")}
    (their_code, theirs, their_files, their_log), (our_code, ours, our_files, our_log) = \
        results["torchrun"], results["accel"]
    checks = [
        (f"{what}: both exit 0 (torchrun {their_code}, accel {our_code})", their_code == 0 and our_code == 0),
        (f"{what}: the same 4 lines with the same prefixes (torchrun {theirs}, accel {ours})",
         len(theirs) == 4 and (theirs == ours or not prefixes)),
        (f"{what}: --log_dir holds the same files with the same contents (torchrun {sorted(their_files)}, "
         f"accel {sorted(our_files)})", len(their_files) == files and their_files == our_files),
    ]
    if not all(ok for _, ok in checks):
        print(f"--- torchrun ---\n{their_log[-3000:]}\n--- accel launch ---\n{our_log[-3000:]}")
    return checks


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-logs-")
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    env.update(HF_HOME=tmp, ACCEL_PYTHON=sys.executable, PYTHONWARNINGS="ignore")
    checks = compare("the flag", env, ["--log-line-prefix-template", TEMPLATE], tmp)
    checks += compare("the variable", {**env, VARIABLE: "[${rank}]:"}, [], tmp)
    checks += compare("the duplicate filters", env,
                      ["--duplicate_stdout_filters", "hello,nothing", "--duplicate_stderr_filters", "warn"], tmp, 6,
                      prefixes=False)  # without a template accel's console prefix is its own: "[rank 1] "
    checks += compare("the duplicate filters under a template", env,
                      ["--log-line-prefix-template", TEMPLATE, "--duplicate_stdout_filters", "from rank 1"], tmp, 5)
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed = not all(ok for _, ok in checks)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"log prefix and layout: {sum(ok for _, ok in checks)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
