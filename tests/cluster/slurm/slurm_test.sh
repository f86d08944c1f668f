#!/usr/bin/env bash
# slurm_test.sh -- runs jobs on a real 2-node SLURM cluster (slurm_cluster.sh:
# slurmctld + one slurmd per network-namespace "host", Debian slurm-wlm 22.05).
#
# CONTRACT
#   Run as root: tests/cluster/slurm/slurm_test.sh [BUILD_DIR]
#   BUILD_DIR (default: the repository's build/) holds bin/accel and
#   bin/accel-train, used by checks 4 to 7 (CTest passes its build directory).
#   Exit 0: every check passed. 1: a check failed. 77: skipped, because this
#   machine cannot run the cluster (not root, packages missing, no namespaces);
#   the reason is printed. With CI=true a missing capability is exit 1.
#   Packages: apt-get install slurmctld slurmd slurm-client munge
#
#   What it checks, in order:
#   1. placement: sbatch --nodes=2 --ntasks-per-node=1 step_job.sh probe.sh;
#      srun runs probe.sh once on each node; each task reports SLURM's own
#      variables. Passes when the job is COMPLETED 0:0 and node ids 0 and 1
#      each appear once, on host h<id> (hostname and SLURMD_NODENAME), with
#      SLURM_NNODES=2, SLURM_JOB_NODELIST=h[0-1], SLURM_PROCID=<id> and the
#      address it sees on eth0 = that node's NodeAddr.
#   2. optional, your own job (see below): COMPLETED 0:0.
#   3. cancel: a job whose step runs on both nodes, each task writing its pid
#      (as seen in its host) and then running SLURM_TEST_CANCEL_STEP (default
#      "sleep 300"); once every task runs, waits SLURM_TEST_CANCEL_AFTER s
#      (default 2), scancels, and passes when within SLURM_TEST_CANCEL_LIMIT s
#      (default 10; KillWait is 5) no process of the job is left anywhere on
#      the machine (no process whose environment holds SLURM_JOB_ID=<job>, no
#      slurmstepd of the job, the pids written are gone) and the job is
#      CANCELLED.
#   4. accel: scripts/slurm/sbatch_cpu_2x2.sh (ACCEL=BUILD_DIR/bin/accel)
#      running accel-train --steps 30 --log_every 0 --profile on 2 nodes x 2
#      CPU processes, placement from SLURM's variables only: COMPLETED 0:0,
#      weights CRC = the same 2 x 2 layout emulated on one host (two launchers
#      with their own ACCEL_HOST_ID), ranks 0,1 on h0 and 2,3 on h1 (output
#      prefixes), each launcher's SLURM and `network:` notes.
#   5. accel scancel: the template running accel-train --steps 1000000; once
#      both launchers and all 4 workers run, scancel; passes when within
#      SLURM_TEST_CANCEL_LIMIT s no accel launcher, worker or other process of
#      the job is left anywhere and the job is CANCELLED. (accel_checks.sh)
#   6. accel scancel --signal=USR1: the template running
#      checkpoint_worker.py on 2 nodes x 2; once every worker's SIGUSR1
#      handler is installed, scancel --signal=USR1; passes when each rank
#      wrote its checkpoint on its node, both launchers forwarded the signal
#      and lived on, and the job is COMPLETED 0:0. (signal_checks.sh)
#   7. accel --signal=USR1@90: the same job with sbatch --time=2
#      --signal=USR1@90, submitted at least SIGNAL_LEAD s before slurmctld's
#      next time-limit test; SLURM's own trigger, the same checks.
#      (signal_checks.sh)
#   8. teardown leaves no namespace, bridge or process (slurm_down).
#   It prints a TIMING line: bring-up, each job, scancel-to-clean, teardown.
#
# RUNNING YOUR OWN COMMAND IN THE ALLOCATION (e.g. `accel launch`)
#   SLURM_TEST_STEP='CMD ...'   a shell command line run by srun as the step
#       of a 2-node x 1-task job (bash -c on each node, inside the job: the
#       SLURM_* variables are SLURM's), submitted with SLURM_TEST_SBATCH_ARGS
#       (default "--nodes=2 --ntasks-per-node=1"; e.g. add --cpus-per-task=2,
#       each node has SL_CPUS=2 CPUs). E.g.
#         SLURM_TEST_STEP='/work/main/build/bin/accel launch <flags> worker.py'
#       The first node's name is $(scontrol show hostnames
#       "$SLURM_JOB_NODELIST" | head -n1) (h0); it resolves on every host,
#       and TCP between hosts works (e.g. a rendezvous on h0:29500).
#   SLURM_TEST_BATCH=/path/script.sh   a batch script submitted as is, with
#       SLURM_TEST_SBATCH_ARGS (as above; command-line options override the
#       script's #SBATCH lines). Used when SLURM_TEST_STEP is not set.
#   SLURM_TEST_CANCEL_STEP='CMD ...'   replaces "sleep 300" in check 3: it
#       must keep running until cancelled.
#   SLURM_TEST_CHECK='CMD ...'   run (bash -c) after job 2 with the job's
#       output file as $1; its exit status decides the check.
#   Files written by the jobs live in $SL_DIR/work (shared by all hosts).
#   SL_PROCTRACK=cgroup tracks tasks with proctrack/cgroup (cgroup v1 freezer
#       machines only) instead of proctrack/linuxproc, which loses processes
#       that daemonise; see slurm_cluster.sh.
#   SL_KEEP=1 keeps $SL_DIR (logs, slurm.conf, job outputs) after the run.
#   SLURM_TEST_JOB_TIMEOUT (default 60 s) bounds each job.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/slurm_cluster.sh
source "$HERE/slurm_cluster.sh"
# shellcheck source=SCRIPTDIR/accel_checks.sh
source "$HERE/accel_checks.sh"
# shellcheck source=SCRIPTDIR/signal_checks.sh
source "$HERE/signal_checks.sh"
BUILD=${1:-$HERE/../../../build}

JOB_TIMEOUT=${SLURM_TEST_JOB_TIMEOUT:-60}
CANCEL_STEP=${SLURM_TEST_CANCEL_STEP:-sleep 300}
CANCEL_AFTER=${SLURM_TEST_CANCEL_AFTER:-2}
CANCEL_LIMIT=${SLURM_TEST_CANCEL_LIMIT:-10}
FAILS=0

say() { printf '%s\n' "$*"; }
# shellcheck disable=SC2001 # indents every line of multi-line text
indent() { sed 's/^/  | /'; }
pass() { say "PASS: $*"; }
fail() { say "FAIL: $*"; FAILS=$((FAILS + 1)); }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fs", b - a }'; }

# scancel_until_clean ID WHAT LEFT_CMD...: scancel job ID, then poll LEFT_CMD (prints what is still
# there) until it prints nothing or CANCEL_LIMIT passes; one PASS/FAIL line each for the processes
# and the job's final state. T_CLEAN: seconds from scancel to clean.
scancel_until_clean() {
  local id=$1 what=$2 left t_s0 res
  shift 2
  t_s0=$(sl_now)
  scancel "$id"
  while :; do
    left=$("$@" | sed '/^$/d')
    if [ -z "$left" ]; then break; fi
    if awk -v a="$t_s0" -v b="$(sl_now)" -v l="$CANCEL_LIMIT" 'BEGIN { exit !(b - a > l) }'; then break; fi
    sleep 0.1
  done
  T_CLEAN=$(secs "$t_s0" "$(sl_now)")
  if [ -z "$left" ]; then
    pass "scancel: no $what of job $id left after $T_CLEAN"
  else
    fail "scancel: after ${CANCEL_LIMIT}s processes of job $id remain:"; indent <<<"$left"
  fi
  res=$(slurm_wait_job "$id" "$JOB_TIMEOUT") || true
  if [[ $res == CANCELLED* ]]; then pass "cancelled job state: $res"; else fail "cancelled job state: $res"; fi
}

if ! slurm_prereqs; then
  if [ "${CI:-}" = true ]; then say "FAIL: cannot run SLURM here (CI=true): $SL_SKIP_REASON"; exit 1; fi
  say "SKIP: cannot run SLURM here: $SL_SKIP_REASON"
  exit 77
fi
say "slurm: $(slurmctld -V), $(munged --version 2>&1 | head -n1)"
if ! BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || [ ! -x "$BUILD/bin/accel" ] || [ ! -x "$BUILD/bin/accel-train" ]; then
  say "FAIL: no bin/accel and bin/accel-train in build directory '${1:-build}'"; exit 1
fi
ACCEL=$BUILD/bin/accel TRAIN=$BUILD/bin/accel-train

t_up0=$(sl_now)
if ! slurm_up 2; then say "FAIL: cluster did not come up"; exit 1; fi
t_up1=$(sl_now)
W=$SL_DIR/work
mkdir -p "$W"
accel_clean_env
sinfo -N -o '%N %T %o'   # node, state, NodeAddr

# --- 1. placement ------------------------------------------------------------
t_j0=$(sl_now)
id=$(slurm_submit "$W/probe.out" --nodes=2 --ntasks-per-node=1 --time=5 -J probe \
       "$HERE/step_job.sh" "$HERE/probe.sh")
res=$(slurm_wait_job "$id" "$JOB_TIMEOUT") || true
t_j1=$(sl_now)
say "probe job $id: $res"
indent <"$W/probe.out" || true
if [ "$res" = "COMPLETED 0:0" ]; then pass "probe job completed"; else fail "probe job: $res"; fi
if [ "$(grep -c '^PROBE ' "$W/probe.out" || true)" = 2 ]; then pass "two tasks reported"; else fail "expected 2 PROBE lines"; fi
for k in 0 1; do
  want="PROBE host=h$k nodename=h$k nodeid=$k nnodes=2 nodelist=h[0-1] procid=$k localid=0 ntasks=2 stepid=0 ip=$(slurm_node_addr "h$k")"
  if grep -qxF "$want" "$W/probe.out"; then pass "node $k: $want"; else fail "node $k: no line '$want'"; fi
done

# --- 2. caller's own job -----------------------------------------------------
t_p0=$(sl_now); t_p1=$t_p0; own=
if [ -n "${SLURM_TEST_STEP:-}" ] || [ -n "${SLURM_TEST_BATCH:-}" ]; then
  if [ -n "${SLURM_TEST_STEP:-}" ]; then
    own="step '$SLURM_TEST_STEP'"
    # shellcheck disable=SC2086
    id=$(cd "$W" && slurm_submit "$W/own.out" ${SLURM_TEST_SBATCH_ARGS:---nodes=2 --ntasks-per-node=1} \
           --time=10 -J own "$HERE/step_job.sh" bash -c "$SLURM_TEST_STEP")
  else
    own="batch $SLURM_TEST_BATCH"
    # shellcheck disable=SC2086
    id=$(cd "$W" && slurm_submit "$W/own.out" ${SLURM_TEST_SBATCH_ARGS:---nodes=2 --ntasks-per-node=1} \
           -J own "$SLURM_TEST_BATCH")
  fi
  res=$(slurm_wait_job "$id" "$JOB_TIMEOUT") || true
  t_p1=$(sl_now)
  say "own job $id ($own): $res"
  indent <"$W/own.out" || true
  if [ "$res" = "COMPLETED 0:0" ]; then pass "own job completed"; else fail "own job: $res"; fi
  if [ -n "${SLURM_TEST_CHECK:-}" ]; then
    if bash -c "$SLURM_TEST_CHECK" check "$W/own.out"; then pass "SLURM_TEST_CHECK"; else fail "SLURM_TEST_CHECK"; fi
  fi
fi

# --- 3. scancel in the middle of a running job ------------------------------
t_c0=$(sl_now)
# shellcheck disable=SC2016 # expanded by each task, not here
task='echo $$ >"$0/pid.$SLURM_NODEID"; exec bash -c "$1"'
id=$(slurm_submit "$W/cancel.out" --nodes=2 --ntasks-per-node=1 --time=5 -J cancel \
       "$HERE/step_job.sh" bash -c "$task" "$W" "$CANCEL_STEP")
started=no
for _ in $(seq 1 $((JOB_TIMEOUT * 5))); do
  if [ -s "$W/pid.0" ] && [ -s "$W/pid.1" ]; then started=yes; break; fi
  sleep 0.2
done
alive() {  # alive HOST PID: PID (as seen inside HOST) is a live process there
  # shellcheck disable=SC2016 # $0 is expanded by that sh
  slurm_exec_on "$1" sh -c 'grep -q "^State:[[:space:]]*[^Z]" /proc/$0/status 2>/dev/null' "$2" 2>/dev/null
}
# probe_left ID: what is left of the probe job ID: its processes, and the tasks by their pids.
probe_left() {
  local k
  slurm_job_procs "$1"
  for k in 0 1; do
    if alive "h$k" "$(cat "$W/pid.$k")"; then echo "pid $(cat "$W/pid.$k") on h$k"; fi
  done
}
if [ $started = yes ]; then
  sl_sleep "$CANCEL_AFTER"
  before=$(slurm_job_procs "$id")
  say "processes of job $id before scancel:"; indent <<<"$before"
  for k in 0 1; do
    p=$(cat "$W/pid.$k")
    if alive "h$k" "$p"; then pass "task on h$k (pid $p there) running"; else fail "task on h$k (pid $p) not running before scancel"; fi
    if grep -q "^[0-9]* h$k " <<<"$before"; then :; else fail "no process of job $id seen on h$k"; fi
  done
  scancel_until_clean "$id" "process on any host" probe_left "$id"
  T_CLEAN_PROBE=$T_CLEAN
else
  fail "cancel job $id: tasks did not start within ${JOB_TIMEOUT}s ($(squeue -h -j "$id" -o '%T %R' 2>/dev/null || true))"
  T_CLEAN_PROBE=-
fi
indent <"$W/cancel.out" || true
t_c1=$(sl_now)

# --- 4., 5. accel launch under SLURM (accel_checks.sh) -----------------------
T_REF=- T_TRAIN=- T_ACANCEL=- T_ACANCEL_JOB=-
accel_check_train
accel_check_cancel
accel_check_deepspeed_slurm

# --- 6., 7. SLURM's USR1 warning through accel launch (signal_checks.sh) -----
signal_check_scancel
signal_check_trigger

# --- 8. teardown -------------------------------------------------------------
if [ "$FAILS" -gt 0 ]; then slurm_dump_logs; fi
ns_prefix="$SL_PREFIX$SL_ID-"
t_d0=$(sl_now)
slurm_down
t_d1=$(sl_now)
if ip netns list | grep -q "^$ns_prefix"; then fail "namespaces left: $(ip netns list | grep "^$ns_prefix")"; else pass "no namespace left"; fi
if ip link show "asb$SL_ID" >/dev/null 2>&1; then fail "bridge asb$SL_ID left"; else pass "no bridge left"; fi

say "TIMING up=$(secs "$t_up0" "$t_up1") probe_job=$(secs "$t_j0" "$t_j1")" \
    "own_job=$(secs "$t_p0" "$t_p1") cancel_job=$(secs "$t_c0" "$t_c1")" \
    "scancel_to_clean=$T_CLEAN_PROBE accel_ref=$T_REF accel_job=$T_TRAIN" \
    "accel_cancel_job=$T_ACANCEL_JOB accel_scancel_to_clean=$T_ACANCEL" \
    "usr1_scancel_job=$T_SIG_SCANCEL usr1_at_90_job=$T_SIG_TRIGGER usr1_at_90_submit_to_signal=$T_SIG_DELAY" \
    "down=$(secs "$t_d0" "$t_d1")"
if [ "$FAILS" -gt 0 ]; then say "RESULT: FAIL ($FAILS)"; exit 1; fi
say "RESULT: PASS"
