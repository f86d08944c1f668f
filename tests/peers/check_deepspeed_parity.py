#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_deepspeed_parity.py - a worker sees the same under `accel deepspeed` as under the real
# `deepspeed` launcher of DeepSpeed 0.19 (its CPU accelerator, on this machine without GPUs).
# Each case below is launched by both with ds_probe.py as the program; every rank's whole
# environment and its arguments are compared. A difference passes only when
# deepspeed_differences.txt lists it with its reason (a listed one no case shows any more fails,
# and so does one docs/deepspeed.md does not name). First, the flag list
# tests/compat/deepspeed_0_19_launcher_flags.txt must be the real parser's names, and every
# flag is in a case or in NOT_LAUNCHED with why.
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary). Exit 1 on a miss.
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile

import process_group
from launch_cases import ROOT, free_port
from listed_differences import load_listed, print_problems, rank_problems

ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
DEEPSPEED = os.path.join(os.path.dirname(sys.executable), "deepspeed")
PEERS = os.path.join(ROOT, "tests", "peers")
PROBE = os.path.join(PEERS, "ds_probe.py")
FLAGS_FILE = os.path.join(ROOT, "tests", "compat", "deepspeed_0_19_launcher_flags.txt")
LISTED = os.path.join(PEERS, "deepspeed_differences.txt")
TIMEOUT = 180

NOT_LAUNCHED = {
    "force_multi": "starts the hosts through pdsh, which this machine lacks; accel's hostfile launches over ssh are "
                   "tests/cluster's",
    "autotuning": "DeepSpeed's autotuner: accel refuses it (tests/unit/deepspeed_args_test.cc)",
    "bind_cores_to_rank": "DeepSpeed runs each rank under numactl, which this machine lacks; accel pins the rank "
                          "itself (tests/cli/launch_deepspeed_test.cc reads Cpus_allowed_list)",
    "bind_core_list": "as bind_cores_to_rank",
}


@dataclasses.dataclass
class Case:
    name: str
    args: list = dataclasses.field(default_factory=list)  # {port}, {hostfile}, {logs} filled in
    machines: list = dataclasses.field(default_factory=lambda: [[]])  # per launcher: its own extra words
    form: str = "script"  # script | module | no_python
    env: dict = dataclasses.field(default_factory=dict)
    cwd: str = ROOT

    def program(self, out):
        if self.form == "module":
            return ["ds_probe", out]
        if self.form == "no_python":
            return [sys.executable, PROBE, out]
        return [os.path.relpath(PROBE, self.cwd), out, "--x", "a b"]


HOSTFILE = "{hostfile}"
CASES = [
    Case("defaults: this machine's one CPU device"),
    Case("two processes, port, quiet", ["--num_gpus", "2", "--master_port", "{port}", "-q"]),
    Case("num_accelerators, log level, no local rank", ["--num_accelerators", "3", "--log_level", "warning",
                                                       "--no_local_rank", "--master_addr", "10.9.9.9"]),
    Case("module", ["--num_gpus", "2", "--module"], form="module", cwd=PEERS),
    Case("no python", ["--num_gpus", "2", "--no_python", "--no_local_rank"], form="no_python"),
    Case("CUDA_VISIBLE_DEVICES becomes --include", env={"CUDA_VISIBLE_DEVICES": "0"}),
    Case("hostfile with --include", ["-H", HOSTFILE, "-i", "localhost:1,3", "--no_ssh_check", "--master_addr",
                                     "127.0.0.1", "--ssh_port", "22", "--launcher", "openmpi", "--launcher_args",
                                     "-x Y", "--venv_script", "/dev/null"]),
    Case("hostfile with --exclude and --num_nodes", ["--hostfile", HOSTFILE, "--exclude", "localhost:0",
                                                     "--no_ssh_check", "--master_addr", "127.0.0.1"]),
    Case("hostfile, first node", ["--hostfile", HOSTFILE, "--num_nodes", "1", "--no_ssh_check", "--master_addr",
                                  "127.0.0.1"]),
    Case("per-rank logs and a pid file", ["--num_gpus", "2", "--enable_each_rank_log", "{logs}", "--save_pid"]),
    Case("two nodes without ssh", ["--hostfile", "{hostfile2}", "--no_ssh", "--master_addr", "127.0.0.1",
                                   "--master_port", "{port}"], machines=[["--node_rank", "0"], ["--node_rank", "1"]]),
]


def check_flag_list():
    """The checked-in list names exactly the real parser's flags, and every one is launched."""
    from deepspeed.launcher.runner import parse_args  # noqa: F401 - its parser is built inside
    import argparse
    captured = {}
    real_parse = argparse.ArgumentParser.parse_args

    def capture(self, args=None, namespace=None):
        captured["parser"] = self
        return real_parse(self, ["x.py"], namespace)

    argparse.ArgumentParser.parse_args = capture
    try:
        parse_args(["x.py"])
    finally:
        argparse.ArgumentParser.parse_args = real_parse
    real = {max((o for o in a.option_strings if o.startswith("--")), key=len)[2:]
            for a in captured["parser"]._actions if any(o.startswith("--") for o in a.option_strings)} - {"help"}
    with open(FLAGS_FILE) as f:
        listed = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    real = {"num_gpus" if n == "num_accelerators" else n for n in real}
    problems = [f"DeepSpeed 0.19 has --{n}, {FLAGS_FILE} does not" for n in sorted(real - listed)]
    problems += [f"{FLAGS_FILE} lists --{n}, DeepSpeed 0.19 has no such flag" for n in sorted(listed - real)]
    spelled = " ".join(" ".join(c.args + [w for m in c.machines for w in m]) for c in CASES) + " --module --no_python"
    short = {"hostfile": "-H", "include": "-i", "exclude": "-e", "quiet": "-q", "num_gpus": "--num_accelerators"}
    for name in sorted(listed - set(NOT_LAUNCHED)):
        if not any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", spelled) for s in (f"--{name}", short.get(name, "--"))):
            problems.append(f"--{name} is in no case of check_deepspeed_parity.py (nor in NOT_LAUNCHED)")
    for p in problems:
        print(f"FAIL {p}")
    return len(problems)


def run_launcher(who, case, out, tmp, port):
    fill = {"{port}": port, "{hostfile}": os.path.join(tmp, "hostfile"), "{hostfile2}": os.path.join(tmp, "hostfile2"),
            "{logs}": os.path.join(tmp, "logs-" + who)}
    args = [fill.get(a, a) for a in case.args]
    env = {**os.environ, "HF_HOME": os.path.join(tmp, "hf"), "ACCEL_PYTHON": sys.executable,
           "PYTHONWARNINGS": "ignore", **case.env}
    env.pop("CUDA_VISIBLE_DEVICES", None) if "CUDA_VISIBLE_DEVICES" not in case.env else None
    launcher = [DEEPSPEED] if who == "deepspeed" else [ACCEL, "deepspeed"]
    procs = [process_group.start([*launcher, *args, *extra, *case.program(out)], cwd=case.cwd, env=env)
             for extra in case.machines]
    results = [process_group.finish(p, TIMEOUT) for p in procs]
    return [code for code, _, _ in results], "\n".join(o + e for _, o, e in results)


def read_ranks(out, tmp):
    ranks = {}
    for name in os.listdir(out):
        m = re.fullmatch(r"env-(\d+)\.json", name)
        if m:
            with open(os.path.join(out, name)) as f:
                probe = json.load(f)
            env = {k: v.replace(out, "<out>").replace(tmp, "<tmp>") for k, v in probe["env"].items()}
            if "TORCHELASTIC_ERROR_FILE" in env:
                env["TORCHELASTIC_ERROR_FILE"] = "<set>"
            ranks[int(m.group(1))] = {**{("env", k): v for k, v in env.items()}, ("argv", "argv"): probe["argv"]}
    return ranks


def rank_logs(folder):
    """{file name with its time stamp as <stamp>: its text} of an --enable_each_rank_log folder."""
    logs = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name)) as f:
            logs[re.sub(r"^\d{14}_", "<stamp>_", name)] = f.read()
    return logs


def check_case(case, tmp, listed, seen):
    results = {}
    port = free_port()
    for who in ("deepspeed", "accel"):
        out = os.path.join(tmp, re.sub(r"[^a-z0-9]+", "_", case.name.lower()), who)
        os.makedirs(out)
        codes, log = run_launcher(who, case, out, tmp, port)
        results[who] = (codes, log, read_ranks(out, tmp))
    (their_codes, their_log, theirs), (our_codes, our_log, ours) = results["deepspeed"], results["accel"]
    problems, failed, here = rank_problems("deepspeed", their_codes, our_codes, theirs, ours, listed, seen)
    if "--enable_each_rank_log" in case.args:
        a, b = rank_logs(os.path.join(tmp, "logs-deepspeed")), rank_logs(os.path.join(tmp, "logs-accel"))
        if a != b or not a:
            problems.append(f"--enable_each_rank_log files: deepspeed {a}, accel {b}")
    print(f"{'FAIL' if problems else 'ok  '} {case.name}: {len(ours)} worker(s); listed differences: "
          f"{', '.join(sorted(here)) or 'none'}")
    print_problems(problems, failed, [("deepspeed", their_log), ("accel deepspeed", our_log)])
    return not problems


def main():
    wanted = set(sys.argv[1:])
    cases = [c for c in CASES if not wanted or c.name in wanted]
    failed = check_flag_list()
    listed, seen = load_listed(LISTED, ("env", "argv")), set()
    tmp = tempfile.mkdtemp(prefix="accel-deepspeed-parity-")
    with open(os.path.join(tmp, "hostfile"), "w") as f:
        f.write("localhost slots=4\n")
    with open(os.path.join(tmp, "hostfile2"), "w") as f:
        f.write("localhost slots=2\n127.0.0.1 slots=2\n")
    passed = sum(check_case(case, tmp, listed, seen) for case in cases)
    failed += len(cases) - passed
    if not wanted:
        for key in sorted(set(listed) - seen):
            print(f"FAIL {LISTED}: {key[0]} {key[1]} is listed but no case shows it any more: remove it")
            failed += 1
    with open(os.path.join(ROOT, "docs", "deepspeed.md")) as f:
        doc = f.read()
    for key in sorted(listed):
        if key[1] not in doc:
            print(f"FAIL docs/deepspeed.md does not name the deliberate difference {key[1]} ({LISTED})")
            failed += 1
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"DeepSpeed launcher parity: {passed} of {len(cases)} cases the same under accel deepspeed and deepspeed "
          f"0.19, {len(seen)} listed differences seen")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
