#!/usr/bin/env python3
"""/metrics under a real Prometheus (CTest `prometheus`): Debian's prometheus, started here on
loopback with a scrape configuration for a two-machine job's launchers (machine 0 on 127.0.0.1,
machine 1 on 127.0.0.2, the same port), scrapes them every second. Rank 3 fails in round 0 and
again in round 1, after one restart: through Prometheus' HTTP API every rank's series carries
job, host, machine, rank and local rank; each rank's restarts read 1; the failed worker's exit
code and the job's verdict are read while --metrics_linger serves them, and a signal ends the
linger. Meanwhile a stranger's POST, a long path and 1,000 connections are refused or bounded and
the job runs on, its launcher's descriptors bounded. Prints PASS or FAIL per check; exits 1 on
any failure, 77 when prometheus is missing outside CI.
Usage: prometheus_test.py ACCEL"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ACCEL = os.path.abspath(sys.argv[1])
failures = []


def check(name, ok, detail=None):
    print(("PASS: " if ok else "FAIL: ") + name, flush=True)
    if not ok:
        failures.append(name)
        if detail is not None:
            print("  " + str(detail)[-3000:], flush=True)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    check(what + f" within {seconds} s", False)
    return None


def get(url, method="GET", data=None):
    request = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()
    except OSError:
        return None, {}, ""


class Prometheus:
    def __init__(self, tmp, targets):
        self.port = free_port()
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n"
                    "  - job_name: accel\n    static_configs:\n"
                    f"      - targets: [{', '.join(repr(t) for t in targets)}]\n")
        self.log = open(os.path.join(tmp, "prometheus.log"), "w")
        self.process = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp}/tsdb",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)

    def ready(self):
        return get(f"http://127.0.0.1:{self.port}/-/ready")[0] == 200

    def query(self, expr):
        status, _, body = get(f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        if status != 200:
            return []
        return json.loads(body)["data"]["result"]

    def stop(self):
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def launcher(tmp, machine, ports, address):
    script = ("echo round $TORCHELASTIC_RESTART_COUNT; "
              "if [ $RANK = 3 ]; then sleep 3; exit $((6 + TORCHELASTIC_RESTART_COUNT)); fi; sleep 60")
    argv = [ACCEL, "launch", "--cpu", "--num_machines", "2", "--machine_rank", str(machine), "--num_processes", "4",
            "--main_process_ip", "127.0.0.1", "--main_process_port", str(ports["main"]), "--job_port",
            str(ports["job"]), "--max_restarts", "1", "--grace_period", "2", "--metrics_port", str(ports["metrics"]),
            "--metrics_addr", address, "--metrics_linger", "60", "--no_python", "sh", "-c", script]
    env = dict(os.environ, HF_HOME=os.path.join(tmp, "hf"), ACCEL_NVML_LIBRARY=os.path.join(tmp, "none.so"),
               ACCEL_CUDA_LIBRARY=os.path.join(tmp, "none.so"), TMPDIR=tmp)
    for name in ("SLURM_JOB_ID", "SLURM_PROCID", "ACCELERATE_CONFIG_FILE"):
        env.pop(name, None)
    out = open(os.path.join(tmp, f"machine{machine}.log"), "w")
    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env), out


def fds_of(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def strangers(address, port, pid):
    """A POST, a long path and 1,000 connections at once; returns the most descriptors seen."""
    base = f"http://{address}:{port}"
    status, _, _ = get(base + "/metrics", method="POST", data=b"x=1")
    check("a stranger's POST is refused with 405", status == 405, status)
    status, _, _ = get(base + "/" + "a" * 20000)
    check("a 20,000-byte path is refused with 414", status == 414, status)
    most, sockets = fds_of(pid), []
    for _ in range(1000):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((address, port))
        sockets.append(s)
    for _ in range(20):
        most = max(most, fds_of(pid))
        time.sleep(0.05)
    for s in sockets:
        s.close()
    return most


def main():
    if not shutil.which("prometheus"):
        if os.environ.get("CI") == "true":
            check("prometheus is installed (required when CI=true)", False)
            sys.exit(1)
        print("SKIP: prometheus is not installed (apt-get install prometheus)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="accel-prometheus-")
    ports = {"main": free_port(), "job": free_port(), "metrics": free_port()}
    addresses = ["127.0.0.1", "127.0.0.2"]
    targets = [f"{a}:{ports['metrics']}" for a in addresses]
    prometheus = Prometheus(tmp, targets)
    launchers = []
    try:
        launchers = [launcher(tmp, m, ports, addresses[m]) for m in (0, 1)]
        pids = [p.pid for p, _ in launchers]
        wait_for("prometheus is ready", prometheus.ready)
        status, headers, body = wait_for("machine 1's /metrics answers",
                                         lambda: (lambda r: r if r[0] == 200 else None)(get(f"http://{targets[1]}/metrics")))
        check("the Content-Type is text/plain; version=0.0.4; charset=utf-8",
              headers.get("Content-Type") == "text/plain; version=0.0.4; charset=utf-8", headers)
        check("machine 1 serves its own ranks, not the job's series",
              'rank="2"' in body and "accel_job_round" not in body, body[:500])
        baseline = fds_of(pids[0])
        most = strangers(addresses[0], ports["metrics"], pids[0])
        check(f"1,000 connections leave machine 0's launcher at most 12 descriptors above its {baseline} "
              f"({most} seen)", 0 < most <= baseline + 12)
        check("the job runs on after the strangers", all(p.poll() is None for p, _ in launchers))
        up = wait_for("both launchers are up in Prometheus",
                      lambda: (lambda r: r if len(r) == 2 and all(x["value"][1] == "1" for x in r) else None)(
                          prometheus.query('up{job="accel"}')))
        check("Prometheus scrapes both launchers", up is not None, up)
        ended = wait_for("the job's exit code in Prometheus during --metrics_linger",
                         lambda: prometheus.query("accel_job_exit_code"), seconds=60)
        check("accel_job_exit_code is 7 (rank 3's code in round 1)",
              ended and ended[0]["value"][1] == "7", ended)
        verdict = prometheus.query("accel_job_verdict")
        check("accel_job_verdict says failed", verdict and verdict[0]["metric"].get("verdict") == "failed", verdict)
        restarts = prometheus.query("accel_rank_restarts_total")
        ranks = sorted(int(r["metric"]["rank"]) for r in restarts)
        check("every rank's accel_rank_restarts_total is 1", ranks == [0, 1, 2, 3] and
              all(r["value"][1] == "1" for r in restarts), restarts)
        labels = {"job", "host", "machine", "rank", "local_rank", "instance"}
        check("every rank series carries job, host, machine, rank and local_rank",
              all(labels <= set(r["metric"]) for r in restarts), restarts)
        check("ranks 2 and 3 are machine 1's, their local ranks 0 and 1",
              sorted((r["metric"]["rank"], r["metric"]["machine"], r["metric"]["local_rank"]) for r in restarts
                     if r["metric"]["rank"] in ("2", "3")) == [("2", "1", "0"), ("3", "1", "1")], restarts)
        code = wait_for("rank 3's exit code in Prometheus", lambda: prometheus.query('accel_rank_exit_code{rank="3"}'))
        check("rank 3's accel_rank_exit_code is 7", code and code[0]["value"][1] == "7", code)
        check("both launchers still linger", all(p.poll() is None for p, _ in launchers))
        for p, _ in launchers:
            p.send_signal(signal.SIGTERM)
        codes = [p.wait(20) for p, _ in launchers]
        check(f"a SIGTERM ends the linger with the job's code ({codes})", codes == [7, 7])
    finally:
        for p, out in launchers:
            if p.poll() is None:
                p.kill()
                p.wait()
            out.close()
        prometheus.stop()
        if failures:
            for name in ("machine0.log", "machine1.log", "prometheus.log"):
                with open(os.path.join(tmp, name), errors="replace") as f:
                    print(f"--- {name}:\n" + f.read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"prometheus: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


main()
