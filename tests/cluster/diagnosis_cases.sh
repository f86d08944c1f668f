# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# diagnosis_cases.sh - the cases of cluster_test.sh for what tells a user whether and where a job
# across machines works (docs/diagnose.md, "Before: `accel test`"). Sourced by cluster_test.sh: uses its
# take_port, wait_hosts, HOST_OF, EXIT_RC/EXIT_AT and cluster_cases.sh's expect_in, expect_exit.
#   accel_test   2 hosts x 2: `accel test` on each passes every check over shared memory and Gloo
#                and prints its figures; then host 1's link is down and join_timeout=5: both
#                fail within 15 s, machine 0 naming machine 1
#   stacks_2x2   2 hosts x 2 runtime_worker ranks, rank 3 (host 1) spinning outside any collective,
#                the others waiting in #6 all_reduce: `accel stacks` on host 0 and on host 1 prints
#                all 4 ranks (gathered over the job channel); then the same job under
#                --hang_timeout 3: host 0's failure summary names every rank of both hosts, and
#                both launchers exit 1
#   stragglers_2x2  2 hosts x 2 runtime_worker ranks, one rank 60 ms late to every all_reduce,
#                host 1's launcher's clock skewed (ACCEL_TEST_CLOCK_SKEW: namespaces share one
#                clock): rank 1 (host 0) late under a +5 s skew, then rank 3 (host 1) late under a
#                -5 s skew, each named on host 0 while the job runs and no other rank; a healthy job
#                under a +5 s skew names nobody
#   logs_3x2     3 hosts x 2 ranks, each writing known lines on both streams and random text, with
#                --log_dir on each host: host 0's run folder holds hosts 1 and 2's rank files byte
#                for byte (machine_<M>_<host>/attempt_0/<local rank>/), and its events.jsonl every
#                host's six worker_started
# The cases are called through run_case, which shellcheck cannot follow; $work is cluster_test.sh's.
# shellcheck disable=SC2317,SC2154

# start_accel_test TAG K PORT ARGS...: host K's `accel test` (machine K of 2, 4 processes) in the
# background. Debian's python3 has no Accelerate, so its test script is skipped, as everywhere.
start_accel_test() {
  local tag=$1 k=$2 p=$3
  shift 3
  on_host_bg "$k" env ACCEL_PYTHON=/usr/bin/python3 timeout -k 5 60 "$build/bin/accel" test --cpu \
    --num_machines 2 --machine_rank "$k" --num_processes 4 --main_process_ip "$(host_addr 0)" \
    --main_process_port "$p" "$@" >"$work/$tag.h$k.log" 2>&1
  HOST_OF[$CLUSTER_LAST_PID]=$k
}

case_accel_test() {
  local bad=0 k t0 port
  take_port
  for k in 0 1; do start_accel_test test "$k" "$port"; done
  wait_hosts || bad=1
  for k in 0 1; do expect_in "$work/test.h$k.log" "accel test: every check passed"; done
  expect_in "$work/test.h0.log" "4 ranks on 2 machines" "all_reduce [shm+gloo]    pass" \
    "all_gather [shm+gloo]    pass" "broadcast [shm+gloo]     pass" "bandwidth [shm+gloo]     figure"
  grep -E '] (barrier|bandwidth) ' "$work/test.h0.log" || true   # the figures, into the case's report

  cluster_link_down 1
  take_port
  t0=$EPOCHREALTIME
  for k in 0 1; do start_accel_test down "$k" "$port" --rdzv_conf join_timeout=5; done
  wait_hosts || true
  cluster_link_up 1
  echo "host 1's link down, join_timeout=5:"
  for k in 0 1; do
    expect_exit "$k" 1 15 "$t0"
    expect_in "$work/down.h$k.log" "accel test: FAILED: preflight (exit 1)"
  done
  expect_in "$work/down.h0.log" "machine 1 of 2 did not join within 5 s"
  expect_in "$work/down.h1.log" "could not reach machine 0's launcher"
  ((bad == 0)) || { show_logs test; show_logs down; return 1; }
}

# launcher_of K: the pid of host K's `accel launch` (the child of its `timeout`).
launcher_of() { pgrep -P "$(host_pid "$1")" -x accel; }

# lines_reducing TAG N: at least N ranks of TAG said "reducing".
lines_reducing() { (($(cat "$work/$1".h*.log | grep -c 'reducing$') >= $2)); }

case_stacks_2x2() {
  local bad=0 k t0
  start_hosts stacks 2 4 60 --collective_timeout 120 "$build/bin/runtime_worker" spin 3
  wait_until 30 lines_reducing stacks 4 || { echo "the ranks did not start"; stop_hosts; show_logs stacks; return 1; }
  sleep 1  # five all_reduces later, rank 3 spins and the others wait
  for k in 0 1; do
    t0=$EPOCHREALTIME
    on_host "$k" timeout 60 "$build/bin/accel" stacks "$(launcher_of "$k")" --timeout 20 \
      >"$work/stacks.from$k.txt" 2>&1 || { echo "accel stacks on host $k failed"; bad=1; }
    echo "accel stacks on host $k: $(since "$t0") s"
    expect_in "$work/stacks.from$k.txt" "4 rank(s) on 2 machines" "rank 3 (pid " "on machine 1, " "): spin (" \
      "in #6 all_reduce (f32 x 1000) sum"
    grep -E '^  rank ' "$work/stacks.from$k.txt" || true
  done
  # The flight records come with the stacks: rank 3, on machine 1, never entered #6.
  on_host 1 timeout 60 "$build/bin/accel" fr "$(launcher_of 1)" --timeout 20 >"$work/fr.txt" 2>&1 ||
    { echo "accel fr on host 1 failed"; bad=1; }
  expect_in "$work/fr.txt" "accel fr: 4 rank(s)" "all_reduce (f32 x 1000) sum #6 of group 0: ranks 0-2 entered it" \
    "never did: its last was all_reduce (f32 x 1000) sum #5" "rank 3 (host "
  stop_hosts

  t0=$EPOCHREALTIME
  start_hosts hang 2 4 60 --hang_timeout 3 --collective_timeout 120 "$build/bin/runtime_worker" spin 3
  wait_hosts || true
  for k in 0 1; do expect_exit "$k" 1 30 "$t0"; done
  expect_in "$work/hang.h0.log" "error: no rank made progress for 3 s" "where each rank was before the stop" \
    "rank 3 (pid " "on machine 1, " "): spin (" "where the ranks part (their flight records; records: " \
    "all_reduce (f32 x 1000) sum #6 of group 0: ranks 0-2 entered it" "never did: its last was all_reduce"
  grep -E 'accel: .*(where each|where the ranks|  rank |  all_reduce)' "$work/hang.h0.log" || true
  ((bad == 0)) || { show_logs stacks; show_logs hang; cat "$work"/stacks.from*.txt "$work/fr.txt"; return 1; }
}

# start_skewed TAG SKEW ARGS...: the 2 x 2 job on a fresh port, host 1's launcher's clock SKEW
# seconds off the machine's.
start_skewed() {
  local tag=$1 skew=$2 k port
  shift 2
  take_port
  for k in 0 1; do
    on_host_bg "$k" env ACCEL_TEST_CLOCK_SKEW="$((k == 1 ? skew : 0))" timeout -k 5 60 "$build/bin/accel" launch \
      --cpu --quiet --grace_period 3 --num_machines 2 --machine_rank "$k" --num_processes 4 \
      --main_process_ip "$(host_addr 0)" --main_process_port "$port" "$@" >"$work/$tag.h$k.log" 2>&1
    HOST_OF[$CLUSTER_LAST_PID]=$k
  done
}

# expect_straggler TAG RANK: host 0 named RANK, and no other, while the job ran, and in its summary.
expect_straggler() {
  local log="$work/$1.h0.log"
  expect_in "$log" "straggler: rank $2 (host " "came last to " "lateness after the first rank to arrive"
  if grep -E "straggler: rank [0-9]+ " "$log" | grep -vq "straggler: rank $2 "; then
    echo "another rank than $2 was named:"; grep straggler "$log"; return 1
  fi
  # Named while the job ran: before host 0's ranks said "done".
  awk '/straggler: rank/ && !n { n = NR } /done$/ && !d { d = NR } END { exit !(n && d && n < d) }' "$log" ||
    { echo "rank $2 was not named while the job ran"; return 1; }
}

case_stragglers_2x2() {
  local bad=0
  start_skewed late_here 5 "$build/bin/runtime_worker" slow-rank 1 60 100
  wait_hosts || bad=1
  expect_straggler late_here 1 || bad=1
  grep -E 'accel: .*straggler' "$work/late_here.h0.log" || true
  start_skewed late_there -5 "$build/bin/runtime_worker" slow-rank 3 60 100
  wait_hosts || bad=1
  expect_straggler late_there 3 || bad=1
  start_skewed healthy 5 "$build/bin/runtime_worker" slow-rank -1 0 150
  wait_hosts || bad=1
  if grep -q "straggler: " "$work/healthy.h0.log"; then echo "a healthy job named a straggler"; bad=1; fi
  ((bad == 0)) || { show_logs late_here; show_logs late_there; show_logs healthy; return 1; }
}

case_logs_3x2() {
  local bad=0 k t0 run0 own copy local_rank stream port
  take_port
  t0=$EPOCHREALTIME
  # shellcheck disable=SC2016
  for k in 0 1 2; do
    start_host logs "$k" 3 6 60 "$(host_addr 0)" "$port" --log_dir "$work/logs-h$k" --no_python sh -c \
      'for i in $(seq 1 300); do echo "rank $RANK line $i"; echo "rank $RANK err $i" >&2; done; head -c 300000 /dev/urandom | base64'
  done
  wait_hosts || bad=1
  for k in 0 1 2; do expect_exit "$k" 0 60 "$t0"; done
  run0=$(ls -d "$work"/logs-h0/*/)
  for k in 1 2; do
    own=$(ls -d "$work/logs-h$k"/*/)
    copy=$(ls -d "$run0"machine_"${k}"_*/ 2>/dev/null) || { echo "host 0 has no folder for machine $k"; bad=1; continue; }
    for local_rank in 0 1; do
      for stream in stdout stderr; do
        if cmp -s "$own/attempt_0/$local_rank/$stream.log" "$copy/attempt_0/$local_rank/$stream.log"; then
          echo "machine $k local rank $local_rank $stream.log: the same on host 0 ($(stat -c %s "$own/attempt_0/$local_rank/$stream.log") bytes)"
        else
          echo "machine $k local rank $local_rank $stream.log differs on host 0"; bad=1
        fi
      done
    done
  done
  [[ $(grep -c '"event":"worker_started"' "$run0/events.jsonl") == 6 ]] ||
    { echo "host 0's events.jsonl lacks a worker_started"; bad=1; }
  ((bad == 0)) || { show_logs logs; return 1; }
}

