#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_torchrun_parity.py - a worker sees the same under `accel torchrun` as under real torchrun
# 2.15. Each case below (together they give every flag of tests/compat/torchrun_2_15_flags.txt,
# or the flag is in NOT_LAUNCHED with why) is launched by both with env_probe.py as the program,
# and the whole environment of every rank is compared. A difference passes only when
# torchrun_differences.txt lists it with its reason; a listed one that no case shows any more
# fails too, and so does one docs/launch.md does not name. The flag list's names are checked against
# the real torchrun's parser first.
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary).
# Arguments: case names to run (default: all). Exit 1 on any unlisted difference.
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile

import process_group
from launch_cases import ROOT, free_port
from listed_differences import check_listed, load_listed, print_problems, rank_problems

ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
TORCHRUN = os.path.join(os.path.dirname(sys.executable), "torchrun")
PEERS = os.path.join(ROOT, "tests", "peers")
PROBE = os.path.join(PEERS, "env_probe.py")
FLAGS_FILE = os.path.join(ROOT, "tests", "compat", "torchrun_2_15_flags.txt")
LISTED = os.path.join(PEERS, "torchrun_differences.txt")
TIMEOUT = 180

# Flags no case launches, and why.
NOT_LAUNCHED = {
    "help": "prints the usage; accel's is tests/unit/launch_args_test.cc's",
    "logs_specs": "refused by accel (a Python LogsSpecs plugin); tests/unit/torchrun_flags_test.cc",
    "numa_binding": "torchrun needs numactl for it, which this machine lacks; accel's CPU sets are set beside torch's "
                    "own in check_numa_binding.py",
    "print_completion": "refused by accel (no completion scripts); tests/unit/torchrun_flags_test.cc",
}


@dataclasses.dataclass
class Case:
    name: str
    args: list = dataclasses.field(default_factory=list)  # before the program; {port} and {logs} filled in
    machines: list = dataclasses.field(default_factory=lambda: [[]])  # per machine: its own extra words
    form: str = "script"  # script | module | no_python | run_path
    env: dict = dataclasses.field(default_factory=dict)

    def program(self, out):
        if self.form == "module":
            return ["-m", "env_probe", out]
        if self.form == "no_python":
            return ["--no-python", sys.executable, PROBE, out]
        if self.form == "run_path":
            return ["--run-path", PROBE, out]
        return [PROBE, out]


def two(*per_machine):
    return [["--node-rank", str(k), *words] for k, words in enumerate(per_machine)]


CASES = [
    Case("defaults: one process"),
    Case("one machine, three processes and torchrun's supervision flags",
         ["--nproc-per-node", "3", "--role", "trainer", "--max-restarts", "2", "--monitor-interval", "0.5",
          "--start-method", "fork", "--event-log-handler", "null", "--signals-to-handle", "SIGTERM,SIGUSR1",
          "--shutdown-timeout", "5", "--local-ranks-filter", "0,2", "--log-line-prefix-template", "[${rank}]"]),
    Case("log files, redirects and tee", ["--nproc_per_node", "2", "--log_dir", "{logs}", "-r", "1", "-t", "2",
                                         "--duplicate-stdout-filters", "x", "--duplicate-stderr-filters", "y"]),
    Case("two machines, static rendezvous",
         ["--nnodes", "2", "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", "{port}",
          "--rdzv-conf", "join_timeout=120", "--local-addr", "127.0.0.1"], two([], [])),
    Case("two machines of 1 and 3 processes, min:max nodes",
         ["--nnodes", "2:2", "--master_addr", "127.0.0.1", "--master_port", "{port}"],
         two(["--nproc_per_node", "1"], ["--nproc_per_node", "3"])),
    Case("c10d endpoint with an id", ["--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:{port}", "--rdzv-id",
                                      "job-17", "--nproc-per-node", "2"]),
    Case("elastic: one machine of 1:2 after the last call",
         ["--nnodes", "1:2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:{port}", "--rdzv-conf",
          "last_call_timeout=1", "--nproc-per-node", "2"]),
    Case("elastic: two machines of 2:3, machine 0 by is_host",
         ["--nnodes", "2:3", "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:{port}", "--nproc-per-node", "1"],
         [["--rdzv-conf", "is_host=1,last_call_timeout=1"], ["--rdzv-conf", "is_host=0,last_call_timeout=1"]]),
    Case("standalone", ["--standalone", "--nproc-per-node", "2"]),
    Case("virtual local ranks", ["--nproc-per-node", "2", "--virtual-local-rank"]),
    Case("module", ["--nproc-per-node", "2"], form="module"),
    Case("no python", form="no_python"),
    Case("run path", form="run_path"),
    Case("PET_* defaults", env={"PET_NPROC_PER_NODE": "2", "PET_MAX_RESTARTS": "1", "PET_ROLE": "pet",
                               "PET_STANDALONE": "1", "PET_RDZV_BACKEND": "c10d"}),
]


def flag_names():
    names = []
    with open(FLAGS_FILE) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                names.append(line.split()[0])
    return names


def check_flag_list():
    """The checked-in list names exactly the real torchrun's flags, and every one is launched."""
    from torch.distributed.run import get_args_parser
    real = set()
    for action in get_args_parser()._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs:
            real.add(max(longs, key=len)[2:].replace("-", "_"))
    listed = set(flag_names())
    problems = [f"torchrun 2.15 has --{n}, {FLAGS_FILE} does not" for n in sorted(real - listed)]
    problems += [f"{FLAGS_FILE} lists --{n}, torchrun 2.15 has no such flag" for n in sorted(listed - real)]
    spelled = " ".join(" ".join(c.args + [w for m in c.machines for w in m] + list(c.env) + [c.form]) for c in CASES)
    short = {"redirects": "-r", "tee": "-t", "module": "-m"}
    for name in sorted(listed - set(NOT_LAUNCHED)):
        spellings = [f"--{name}", f"--{name.replace('_', '-')}", f"PET_{name.upper()}", name, short.get(name, "--")]
        if not any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", spelled) for s in spellings):
            problems.append(f"--{name} is in no case of check_torchrun_parity.py (nor in NOT_LAUNCHED)")
    for p in problems:
        print(f"FAIL {p}")
    return len(problems)


def run_launcher(who, case, out, tmp, port):
    logs = os.path.join(tmp, "logs-" + who)
    args = [a.replace("{port}", port).replace("{logs}", logs) for a in case.args]
    env = {**os.environ, "HF_HOME": os.path.join(tmp, "hf"), "ACCEL_PYTHON": sys.executable,
           "PYTHONWARNINGS": "ignore", **case.env}
    env.pop("OMP_NUM_THREADS", None)
    launcher = [TORCHRUN] if who == "torchrun" else [ACCEL, "torchrun"]
    procs = [process_group.start([*launcher, *args, *extra, *case.program(out)], cwd=PEERS, env=env)
             for extra in case.machines]
    results = [process_group.finish(p, TIMEOUT) for p in procs]
    return [code for code, _, _ in results], "\n".join(o + e for _, o, e in results)


def read_ranks(out):
    ranks = {}
    for name in os.listdir(out):
        m = re.fullmatch(r"env-(\d+)\.json", name)
        if m:
            with open(os.path.join(out, name)) as f:
                ranks[int(m.group(1))] = json.load(f)
    return ranks


def normalise(env, out, tmp):
    """A path of each launcher's own is compared as 'set or not'."""
    env = {k: v.replace(out, "<out>").replace(tmp, "<tmp>") for k, v in env.items()}
    if "TORCHELASTIC_ERROR_FILE" in env:
        env["TORCHELASTIC_ERROR_FILE"] = "<set>"
    return env


def check_case(case, tmp, listed, seen):
    results = {}
    port = free_port()  # the same for both, as a user's command line would say
    for who in ("torchrun", "accel"):
        out = os.path.join(tmp, re.sub(r"[^a-z0-9]+", "_", case.name.lower()), who)
        os.makedirs(out)
        codes, log = run_launcher(who, case, out, tmp, port)
        results[who] = (codes, log, {r: {("env", k): v for k, v in normalise(e, out, tmp).items()}
                                     for r, e in read_ranks(out).items()})
    (their_codes, their_log, theirs), (our_codes, our_log, ours) = results["torchrun"], results["accel"]
    problems, failed, here = rank_problems("torchrun", their_codes, our_codes, theirs, ours, listed, seen)
    print(f"{'FAIL' if problems else 'ok  '} {case.name}: {len(ours)} worker(s); listed differences: "
          f"{', '.join(sorted(here)) or 'none'}")
    print_problems(problems, failed, [("torchrun", their_log), ("accel torchrun", our_log)])
    return not problems


def main():
    wanted = set(sys.argv[1:])
    cases = [c for c in CASES if not wanted or c.name in wanted]
    if wanted and not cases:
        print(f"no case named {sorted(wanted)}; cases: {', '.join(c.name for c in CASES)}", file=sys.stderr)
        return 2
    failed = check_flag_list()
    listed, seen = load_listed(LISTED, ("env",)), set()
    tmp = tempfile.mkdtemp(prefix="accel-torchrun-parity-")
    passed = sum(check_case(case, tmp, listed, seen) for case in cases)
    failed += len(cases) - passed + check_listed(listed, seen, not wanted, LISTED)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"torchrun parity: {passed} of {len(cases)} cases the same under accel torchrun and torchrun 2.15, "
          f"{len(seen)} listed differences seen")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
