#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cluster_test.sh - multi-machine `accel launch` on a cluster of network namespaces
# (tests/cluster/netns_cluster.sh): every host runs its own launcher, as on real machines, and
# the ranks meet over a bridge, not loopback.
#   train_2x2, train_4x2  accel-train on 2 hosts x 2 and 4 hosts x 2 processes (shared memory
#                         inside a host, Gloo between) ends with the same weights CRC as the
#                         same layout emulated on one host (ACCEL_HOST_ID per launcher)
#   ddp_2x2               tests/python/ddp_gloo.py (PyTorch DDP, Gloo) on 2 hosts x 2 processes
#   the rest              the launchers' job channel: failure_propagation, vanished_machine,
#                         unreachable_main, restart, dry_run, and DeepSpeed's --no_ssh form
#                         (deepspeed_no_ssh) (tests/cluster/cluster_cases.sh);
#                         Kubernetes pods and uneven layouts (tests/cluster/pod_cases.sh);
#                         machines that come and go (tests/cluster/elastic_cases.sh);
#                         hostfiles over ssh (tests/cluster/ssh_cases.sh); `accel test` across
#                         hosts and every rank's stack (tests/cluster/diagnosis_cases.sh)
# After every case no process may be left in any host.
#
# Usage: cluster_test.sh BUILD_DIR     (its bin/accel, bin/accel-train, bin/accel-bench)
# Exit: 0 all cases passed or skipped (at least one passed), 1 a case failed, 77 skipped (no
# root or no netns; under CI=true that is a failure instead, as is a run where nothing passed).
# Environment: ACCEL_CLUSTER_NO_IFNAME=1  do not set GLOO_SOCKET_IFNAME for ddp_2x2 (the launcher
#                                         is to choose the interface itself)
#              ACCEL_CLUSTER_GRACE=S      after one host's launcher fails, how long the others may
#                                         go on before the test stops them (default 15)
#              ACCEL_CLUSTER_KEEP=1       keep the logs (their folder is printed)
#              ACCEL_CLUSTER_ONLY=A,B     run only the cases named
#              ACCEL_PEERS_PYTHON=PY      the peers' venv python: adds elastic_accelerate
#                                         (tests/peers/check_elastic_accelerate.py sets it)
# The case functions are called through run_case, which shellcheck cannot follow.
# shellcheck disable=SC2317
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ $# == 1 && -d $1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
# shellcheck source=SCRIPTDIR/netns_cluster.sh
source "$here/netns_cluster.sh"

HOSTS=4                         # the largest case; smaller ones use hosts 0..H-1
STEPS=30                        # accel-train steps: enough to make the CRC depend on every sync
GRACE=${ACCEL_CLUSTER_GRACE:-15}
next_port=29500                 # each launch its own port, so no TIME_WAIT of a previous one matters
work=

fail_now() { echo "FAIL: cluster tests: $*" >&2; exit 1; }

# A workspace named after this shell, so a later run can remove one a SIGKILL left behind.
new_workspace() {
  local d pid
  for d in /tmp/accel-cluster-*; do
    [[ -d $d && $d =~ accel-cluster-([0-9]+)\. ]] || continue
    pid=${BASH_REMATCH[1]}
    [[ -d /proc/$pid ]] || rm -rf "$d"
  done
  work=$(mktemp -d "/tmp/accel-cluster-$$.XXXXXX")
}

# PID and all its descendants (by parent, since `timeout` leaves our process group).
kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill -KILL "$1" 2>/dev/null || true
}

# Run by the cluster's trap on every exit: a case still running (a signal) goes first, so
# nothing of it, in or out of the hosts, outlives the test.
cluster_on_exit() {
  [[ -z $case_pid ]] || kill_tree "$case_pid"
  ssh_hosts_down 2>/dev/null || true
  [[ -n $work ]] || return 0
  if [[ ${ACCEL_CLUSTER_KEEP:-} == 1 ]]; then echo "logs kept in $work"; else rm -rf "$work"; fi
}

# The variables a surrounding launch or shell may have set would change what the launchers do.
clean_env() {
  unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GLOO_SOCKET_IFNAME \
        NCCL_SOCKET_IFNAME ACCEL_STORE_TOKEN OMP_NUM_THREADS ACCEL_JOB_PORT ACCEL_HEARTBEAT_TIMEOUT
  local v
  for v in $(compgen -e | grep '^ACCELERATE_' || true); do unset "$v"; done
  export HF_HOME=$work/hf       # no user config; --cpu skips it anyway
  mkdir -p "$work/tmp"
  export TMPDIR=$work/tmp       # what a launch keeps there (stacks before a stop) goes with the workspace
}

# ---- running the launchers -------------------------------------------------------------------

# Launchers in flight: PID -> host. Once wait_hosts saw host k's launcher end: EXIT_RC[k], its
# status, and EXIT_AT[k], when ($EPOCHREALTIME).
declare -A HOST_OF=() EXIT_RC=() EXIT_AT=()

# A fresh store port and the job port above it (each case's range starts 50 above the last).
take_port() { port=$next_port; next_port=$((next_port + 2)); }

# start_host TAG K H WORLD LIMIT IP PORT ARGS...: host K's `accel launch` (machine K of H) in the
# background under `timeout LIMIT`, main process at IP:PORT. Log: $work/TAG.h<K>.log.
start_host() {
  local tag=$1 k=$2 h=$3 world=$4 limit=$5 ip=$6 p=$7
  shift 7
  on_host_bg "$k" timeout -k 5 "$limit" "$build/bin/accel" launch --cpu --quiet --grace_period 3 \
    --num_machines "$h" --machine_rank "$k" --num_processes "$world" \
    --main_process_ip "$ip" --main_process_port "$p" "$@" >"$work/$tag.h$k.log" 2>&1
  HOST_OF[$CLUSTER_LAST_PID]=$k
}

# start_hosts TAG H WORLD LIMIT ARGS...: hosts 0..H-1 on a fresh port, main process on host 0.
start_hosts() {
  local tag=$1 h=$2 world=$3 limit=$4 k port
  shift 4
  take_port
  for ((k = 0; k < h; k++)); do start_host "$tag" "$k" "$h" "$world" "$limit" "$(host_addr 0)" "$port" "$@"; done
}

# host_pid K: the PID (its `timeout`) of host K's launcher in flight.
host_pid() {
  local pid
  for pid in "${!HOST_OF[@]}"; do [[ ${HOST_OF[$pid]} != "$1" ]] || { echo "$pid"; return 0; }; done
  return 1
}

# wait_hosts: waits for every launcher started. Returns the first non-zero exit status, or 0.
# Once one host's launcher has failed the others get GRACE seconds to notice, then are stopped,
# so a run that cannot finish fails fast instead of running into its timeout.
wait_hosts() {
  local pid p rc first=0 stopper='' k
  EXIT_RC=() EXIT_AT=()
  while ((${#HOST_OF[@]})); do
    rc=0; pid=''
    # A job killed by a signal (a SIGKILLed launcher's `timeout` re-raises it) is reported and
    # dropped from bash's job table as soon as bash reaps it, so `wait -n` may no longer know it
    # ("no such job"); `wait PID` still has its status.
    for p in "${!HOST_OF[@]}"; do
      kill -0 "$p" 2>/dev/null || { pid=$p; wait "$p" || rc=$?; break; }
    done
    if [[ -z $pid ]]; then
      wait -n -p pid "${!HOST_OF[@]}" 2>/dev/null || rc=$?
      [[ -n ${pid:-} ]] || { sleep 0.05; continue; }   # one was dropped meanwhile: found above
    fi
    k=${HOST_OF[$pid]}
    EXIT_RC[$k]=$rc EXIT_AT[$k]=$EPOCHREALTIME
    echo "host $k: launcher exited $rc"
    unset "HOST_OF[$pid]"
    ((rc == 0)) && continue
    ((first)) || first=$rc
    if [[ -z $stopper ]] && ((${#HOST_OF[@]})); then
      (sleep "$GRACE"
       echo "hosts' launchers still running $GRACE s after a failure: stopping them"
       kill -TERM "${!HOST_OF[@]}" 2>/dev/null) &
      stopper=$!
    fi
  done
  HOST_OF=()
  [[ -z $stopper ]] || kill "$stopper" 2>/dev/null || true
  return "$first"
}

# launch_hosts TAG H WORLD LIMIT PROGRAM ARGS...: start_hosts, then wait_hosts.
launch_hosts() { start_hosts "$@"; wait_hosts; }

# A case that gives up while launchers run: stop them (TERM; `timeout -k` kills) and reap them.
stop_hosts() {
  ((${#HOST_OF[@]})) || return 0
  kill -TERM "${!HOST_OF[@]}" 2>/dev/null || true
  wait_hosts >/dev/null || true
}

# The last lines of every log of TAG, for a failure's report.
show_logs() {
  local f
  for f in "$work/$1".*log; do echo "--- ${f##*/} (last 15 lines)"; tail -n 15 "$f"; done
}

# No process may outlive a case: every host must be empty (a moment allowed for exits).
check_hosts_empty() {
  local k _ pids
  for ((k = 0; k < HOSTS; k++)); do
    for _ in $(seq 30); do
      mapfile -t pids < <(ip netns pids "$(host_ns "$k")")
      ((${#pids[@]})) || break
      sleep 0.1
    done
    if ((${#pids[@]})); then
      echo "processes left on host $k after the case:"
      ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" || true
      kill -KILL "${pids[@]}" 2>/dev/null || true
      return 1
    fi
  done
}

# ---- cases: each prints its findings; returns 0 pass, 77 skip (first line says why), else fail --

crc_in() { sed -n 's/.*weights crc32 \([0-9a-f]\{8\}\).*/\1/p' "$1" | tail -n 1; }

# layout_run TAG H WORLD ARGS...: the reference for a job of H hosts, emulated on one host: H
# launchers, each with its own ACCEL_HOST_ID, so the runtime groups the ranks as it does on the
# real hosts (shared memory inside a host, Gloo between hosts' leaders) and the sums come out in
# the same order. They run in a network namespace of their own, whose loopback no other test
# shares, so the main and job ports are always free. Log of machine 0: $work/TAG.log.
layout_run() {
  unshare --net -- bash -c "$(declare -f emulated_hosts); emulated_hosts \"\$@\"" layout_run \
    "$build/bin/accel" "$work" "$@"
}

# emulated_hosts ACCEL WORK TAG H WORLD ARGS...: layout_run's body, inside the namespace.
emulated_hosts() {
  local accel=$1 work=$2 tag=$3 h=$4 world=$5 k rc=0 pids=()
  shift 5
  ip link set lo up || return 1
  for ((k = 0; k < h; k++)); do
    ACCEL_HOST_ID=emulated-$k timeout -k 5 60 "$accel" launch --cpu --quiet --num_machines "$h" \
      --machine_rank "$k" --num_processes "$world" --main_process_ip 127.0.0.1 --main_process_port 29500 \
      "$@" >"$work/$tag$([[ $k == 0 ]] || echo ".m$k").log" 2>&1 &
    pids+=($!)
  done
  for k in "${pids[@]}"; do wait "$k" || rc=$?; done
  return "$rc"
}

reference_run() { layout_run "ref$2" "$1" "$2" "$build/bin/accel-train" --steps "$STEPS" --log_every 0; }

# case_train H P: accel-train on H hosts x P processes vs the same layout emulated on one host.
case_train() {
  local h=$1 p=$2 world=$(($1 * $2)) tag=train$(($1 * $2)) ref got
  reference_run "$h" "$world" || { echo "the one-host reference run failed"; show_logs "ref$world"; return 1; }
  ref=$(crc_in "$work/ref$world.log")
  [[ -n $ref ]] || { echo "no weights CRC in the reference run"; show_logs "ref$world"; return 1; }
  if ! ACCEL_DEBUG=INFO launch_hosts "$tag" "$h" "$world" 60 "$build/bin/accel-train" --steps "$STEPS" --log_every 0; then
    echo "the $h-host run failed"; show_logs "$tag"; return 1
  fi
  got=$(crc_in "$work/$tag.h0.log")
  if ! grep -q "after $STEPS steps ($world processes" "$work/$tag.h0.log"; then
    echo "host 0 does not report $world processes"; show_logs "$tag"; return 1
  fi
  grep -q "shared memory within a host" "$work/$tag.h0.log" ||
    { echo "host 0's rank 0 did not report shared memory within hosts"; show_logs "$tag"; return 1; }
  echo "weights crc32: $h hosts x $p = $got, the same layout emulated on one host = $ref"
  [[ $got == "$ref" ]]
}

# ddp_gloo.py on 2 hosts x 2 processes. Torch's Gloo, without GLOO_SOCKET_IFNAME, binds the
# address the hostname resolves to: here every host shares the root's hostname and /etc/hosts
# (127.0.0.1), so ranks would advertise loopback to each other; ddp_gloo.py itself defaults the
# variable to lo. So the test names the interface, unless ACCEL_CLUSTER_NO_IFNAME=1 leaves that
# to the launcher (which exports the interface that reaches main_process_ip).
case_ddp() {
  if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "Debian's python3-torch is not installed for /usr/bin/python3"; return 77
  fi
  if [[ ${ACCEL_CLUSTER_NO_IFNAME:-} == 1 ]]; then
    echo "GLOO_SOCKET_IFNAME not set by the test (ACCEL_CLUSTER_NO_IFNAME=1)"
  else
    export GLOO_SOCKET_IFNAME=$CLUSTER_HOST_IFNAME
    echo "GLOO_SOCKET_IFNAME=$GLOO_SOCKET_IFNAME on every host"
  fi
  if ! launch_hosts ddp 2 4 90 --python /usr/bin/python3 "$root/tests/python/ddp_gloo.py"; then
    echo "the 2-host DDP run failed"; show_logs ddp; return 1
  fi
  # Every rank checked that its DDP gradients equal every other rank's and the mean of the
  # per-rank gradients, and the all_reduce sum; rank 0 says so once all passed the barrier.
  grep -q 'rank 0\] ddp_gloo ok world_size=4' "$work/ddp.h0.log" ||
    { echo "rank 0 did not report ddp_gloo ok world_size=4"; show_logs ddp; return 1; }
  grep 'ddp_gloo ok' "$work/ddp.h0.log"
}

# shellcheck source=SCRIPTDIR/cluster_cases.sh
source "$here/cluster_cases.sh"   # failure_propagation, vanished_machine, unreachable_main, restart, resume_disagree, dry_run, deepspeed_no_ssh
# shellcheck source=SCRIPTDIR/pod_cases.sh
source "$here/pod_cases.sh"       # trainer_v2, pytorchjob, pytorchjob_elastic, uneven
# shellcheck source=SCRIPTDIR/elastic_cases.sh
source "$here/elastic_cases.sh"   # elastic_loss, elastic_spare, elastic_pods, elastic_etcd
# shellcheck source=SCRIPTDIR/ssh_hosts.sh
source "$here/ssh_hosts.sh"
# shellcheck source=SCRIPTDIR/ssh_cases.sh
source "$here/ssh_cases.sh"       # ssh_hostfile, ssh_filters, ssh_interrupt, ssh_link_down, ssh_unreachable, ssh_deepspeed
# shellcheck source=SCRIPTDIR/diagnosis_cases.sh
source "$here/diagnosis_cases.sh" # accel_test, stacks_2x2, stragglers_2x2

# ---- runner ------------------------------------------------------------------------------------

passed=0 failed=0 skipped=0
summary=()

# run_case NAME FUNCTION ARGS...: in a subshell with errexit (so a failing command fails the
# case, not the run), output to a file shown indented; then checks that the hosts are empty.
case_pid=
run_case() {
  local name=$1 t0 secs rc verdict k
  shift
  [[ -z ${ACCEL_CLUSTER_ONLY:-} || ,$ACCEL_CLUSTER_ONLY, == *,$name,* ]] || return 0
  t0=$EPOCHREALTIME
  # In the background: `wait` returns at once on a signal, so the trap cleans up now, not after
  # the case (bash defers traps while a foreground child runs).
  next_port=$((next_port + 50))   # the case's own ports: a subshell's take_port is not seen here
  (set -e; "$@") >"$work/$name.case" 2>&1 &
  case_pid=$!
  rc=0
  wait "$case_pid" || rc=$?
  case_pid=
  check_hosts_empty >>"$work/$name.case" 2>&1 || { ((rc == 0 || rc == 77)) && rc=1; }
  for ((k = 0; k < HOSTS; k++)); do cluster_link_up "$k"; done   # a case that failed with one down
  secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  case $rc in
    0) verdict=PASS; passed=$((passed + 1)) ;;
    77) verdict=SKIP; skipped=$((skipped + 1)) ;;
    *) verdict=FAIL; failed=$((failed + 1)) ;;
  esac
  echo "$verdict $name (${secs} s)"
  sed 's/^/    /' "$work/$name.case"
  summary+=("$(printf '  %-4s %-24s %6s s' "$verdict" "$name" "$secs")")
}

main() {
  cluster_require
  for b in accel accel-train runtime_worker; do [[ -x $build/bin/$b ]] || fail_now "$build/bin/$b is missing"; done
  new_workspace
  clean_env
  local t0=$EPOCHREALTIME
  cluster_up "$HOSTS"
  echo "cluster: $HOSTS hosts $(host_addr 0)..$(host_addr $((HOSTS - 1))) on bridge acb$$," \
       "interface $CLUSTER_HOST_IFNAME; build $build"
  run_case train_2x2 case_train 2 2
  run_case train_4x2 case_train 4 2
  run_case ddp_2x2 case_ddp
  run_case failure_propagation case_failure_propagation
  run_case vanished_machine case_vanished_machine
  run_case unreachable_main case_unreachable_main
  run_case restart case_restart
  run_case resume_disagree case_resume_disagree
  run_case dry_run case_dry_run
  run_case deepspeed_no_ssh case_deepspeed_no_ssh
  run_case trainer_v2 case_trainer_v2
  run_case pytorchjob case_pytorchjob
  run_case pytorchjob_elastic case_pytorchjob_elastic
  run_case uneven case_uneven
  run_case elastic_loss case_elastic_loss
  run_case elastic_spare case_elastic_spare
  run_case elastic_pods case_elastic_pods
  run_case elastic_etcd case_elastic_etcd
  # Accelerate and torch 2.15 come from the peers' venv, which scripts/peers makes after this run.
  [[ -z ${ACCEL_PEERS_PYTHON:-} ]] || run_case elastic_accelerate case_elastic_accelerate
  run_case ssh_hostfile ssh_case case_ssh_hostfile
  run_case ssh_filters ssh_case case_ssh_filters
  run_case ssh_interrupt ssh_case case_ssh_interrupt
  run_case ssh_link_down ssh_case case_ssh_link_down
  run_case ssh_unreachable ssh_case case_ssh_unreachable
  run_case ssh_deepspeed ssh_case case_ssh_deepspeed
  run_case accel_test case_accel_test
  run_case stacks_2x2 case_stacks_2x2
  run_case stragglers_2x2 case_stragglers_2x2
  run_case logs_3x2 case_logs_3x2
  echo "summary: $passed passed, $failed failed, $skipped skipped in" \
       "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
  printf '%s\n' "${summary[@]}"
  ((failed == 0)) || exit 1
  ((passed > 0)) && exit 0
  [[ ${CI:-} == true ]] && fail_now "nothing passed under CI=true"
  exit 77
}

main
