# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# cluster_cases.sh - the cases of cluster_test.sh that test the launchers' job channel (docs/many-machines.md,
# "One job, not N supervisors"). Sourced by cluster_test.sh: uses its start_host(s), wait_hosts,
# stop_hosts, host_pid, take_port, show_logs, EXIT_RC/EXIT_AT, $work and $build.
#   failure_propagation  4 x 2: rank 5 (host 2) exits 7 after 1 s; every launcher exits 7 within
#                        5 s, naming the rank, its machine, its exit and its stderr tail
#   vanished_machine     3 x 2: host 2's link goes down (--heartbeat_timeout 3): all three stop
#                        their workers and exit 1 within 10 s (3 s, then every rank's stack read
#                        within ACCEL_STACKS_TIMEOUT 4 s and 1.5 s more), naming the machine lost,
#                        host 0 with the stacks of hosts 0 and 1, host 2 with its own; then host
#                        1's launcher is SIGKILLed: the others stop within 7 s, naming machine 1
#   unreachable_main     main_process_ip nobody owns (join_timeout=5), machine 0 given an
#                        address not its own, a wrong main_process_port: named, in bounded time
#   restart              3 x 2 accel-train --resume --max_restarts 1, a worker on host 2 SIGKILLed
#                        after a checkpoint: the job completes with the uninterrupted run's CRC
#   resume_disagree      2 x 1 resuming from a checkpoint directory per host, host 1's a step
#                        behind: both launchers exit 1 within 20 s with one message naming it
#   dry_run              GLOO/NCCL_SOCKET_IFNAME=eth0 and the launcher's network note
#   deepspeed_no_ssh     2 x 2 `accel deepspeed --hostfile H --no_ssh --node_rank K`: DDP over Gloo
# Each case collects every finding (bad=1) before it returns, so one run shows them all.
# The cases are called through run_case, which shellcheck cannot follow; $work is cluster_test.sh's.
# shellcheck disable=SC2317,SC2154

# since T0 [T1]: seconds from T0 to T1 (default now), both $EPOCHREALTIME.
since() { awk -v a="$1" -v b="${2:-$EPOCHREALTIME}" 'BEGIN { printf "%.2f", b - a }'; }

# at_most X MAX: X <= MAX (decimals).
at_most() { awk -v x="$1" -v m="$2" 'BEGIN { exit !(x <= m) }'; }

# expect_in FILE TEXT...: every TEXT (fixed strings) in FILE, else says which is missing; bad=1.
expect_in() {
  local f=$1 t
  shift
  for t; do grep -qF -- "$t" "$f" || { echo "${f##*/} lacks: $t"; bad=1; }; done
}

# expect_exit K RC MAX_S T0: host K's launcher ended with RC, at most MAX_S seconds after T0.
expect_exit() {
  local k=$1 rc=$2 max=$3 secs
  secs=$(since "$4" "${EXIT_AT[$k]:-0}")
  echo "host $k: exit ${EXIT_RC[$k]:-none} after $secs s (expected $rc within $max s)"
  [[ ${EXIT_RC[$k]:-} == "$rc" ]] && at_most "$secs" "$max" || bad=1
}

# wait_until SECONDS CMD...: polls CMD every 0.05 s; status 1 if it never succeeded in time.
wait_until() {
  local n=$(($1 * 20))
  shift
  until "$@"; do
    ((n-- > 0)) || return 1
    sleep 0.05
  done
}

# lines_up TAG N: at least N workers of TAG said "up".
lines_up() { (($(cat "$work/$1".h*.log | grep -c ' up$') >= $2)); }

# Processes in any host now, without the grace check_hosts_empty allows: a launcher that has
# exited must not leave a worker behind. Prints them; status 1 if any.
hosts_empty_now() {
  local k pids status=0
  for ((k = 0; k < HOSTS; k++)); do
    mapfile -t pids < <(ip netns pids "$(host_ns "$k")")
    ((${#pids[@]} == 0)) && continue
    echo "left on host $k once its launcher exited:"
    ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" || true
    status=1
  done
  return "$status"
}

# Every worker prints "rank N up", then sleeps until it is stopped.
# shellcheck disable=SC2016
SLEEPER=(--no_python sh -c 'echo "rank $RANK up"; exec sleep 60')

case_failure_propagation() {
  local bad=0 k t_fail last=0 worker
  # bash for $EPOCHREALTIME: the moment rank 5 fails, on the clock the test reads.
  # shellcheck disable=SC2016
  worker='if [[ $RANK == 5 ]]; then sleep 1; echo "rank 5: deliberate failure" >&2
            echo "$EPOCHREALTIME" >"$1"; exit 7; fi; exec sleep 60'
  start_hosts fail 4 8 30 --no_python bash -c "$worker" worker "$work/fail.at"
  wait_hosts || true
  hosts_empty_now || bad=1
  [[ -s $work/fail.at ]] || { echo "rank 5 never failed"; show_logs fail; return 1; }
  t_fail=$(<"$work/fail.at")
  for k in 0 1 2 3; do
    expect_exit "$k" 7 5 "$t_fail"
    expect_in "$work/fail.h$k.log" "rank 5 on machine 2 (" "exited with code 7" \
      "accel:   | rank 5: deliberate failure"
    at_most "${EXIT_AT[$k]:-0}" "$last" || last=${EXIT_AT[$k]}
  done
  echo "rank 5's failure to the last launcher's exit: $(since "$t_fail" "$last") s"
  ((bad == 0)) || { show_logs fail; return 1; }
}

case_vanished_machine() {
  local bad=0 k t0 launcher
  start_hosts lost 3 6 30 --heartbeat_timeout 3 "${SLEEPER[@]}"
  wait_until 20 lines_up lost 6 || { echo "the workers did not start"; stop_hosts; show_logs lost; return 1; }
  t0=$EPOCHREALTIME
  cluster_link_down 2
  wait_hosts || true
  cluster_link_up 2
  hosts_empty_now || bad=1
  echo "host 2's link down; --heartbeat_timeout 3:"
  for k in 0 1 2; do expect_exit "$k" 1 10 "$t0"; done
  for k in 0 1; do
    expect_in "$work/lost.h$k.log" "machine 2 (" "$(host_addr 2)" "was lost" "stopped ranks $((2 * k)), $((2 * k + 1))"
  done
  expect_in "$work/lost.h0.log" "where each rank was before the stop" "rank 2 (pid " "on machine 1, "
  expect_in "$work/lost.h2.log" "machine 0 (" "was lost" "no word from its launcher for 3 s" "stopped ranks 4, 5" \
    "where each rank was before the stop" "rank 5 (pid "
  ((bad == 0)) || show_logs lost

  # The default heartbeat (30 s): the closed connection must tell, not the silence.
  start_hosts killed 3 6 30 "${SLEEPER[@]}"
  wait_until 20 lines_up killed 6 || { echo "the workers did not start"; stop_hosts; show_logs killed; return 1; }
  launcher=$(pgrep -P "$(host_pid 1)" -x accel) || { echo "no launcher on host 1"; stop_hosts; return 1; }
  t0=$EPOCHREALTIME
  kill -KILL "$launcher"
  wait_hosts || true
  hosts_empty_now || bad=1
  echo "host 1's launcher SIGKILLed (its timeout exits 137); default heartbeat (30 s):"
  for k in 0 1 2; do expect_exit "$k" "$( ((k == 1)) && echo 137 || echo 1)" 7 "$t0"; done
  for k in 0 2; do expect_in "$work/killed.h$k.log" "machine 1 (" "$(host_addr 1)" "was lost"; done
  ((bad == 0)) || { show_logs killed; return 1; }
}

case_unreachable_main() {
  local bad=0 k t0 port nobody port0
  nobody=$(unowned_addr)
  take_port
  t0=$EPOCHREALTIME
  for k in 1 2; do
    start_host noreach "$k" 3 6 30 "$nobody" "$port" --rdzv_conf join_timeout=5 "${SLEEPER[@]}"
  done
  wait_hosts || true
  echo "hosts 1, 2 given --main_process_ip $nobody (nobody's), join_timeout=5:"
  for k in 1 2; do
    expect_exit "$k" 1 10 "$t0"
    expect_in "$work/noreach.h$k.log" "could not reach machine 0's launcher" "$nobody:$((port + 1))" \
      "machine $k (" "$(hostname)" "$(host_addr "$k") on $CLUSTER_HOST_IFNAME"
  done

  take_port
  t0=$EPOCHREALTIME
  start_host notmine 0 3 6 30 "$nobody" "$port" "${SLEEPER[@]}"
  wait_hosts || true
  echo "machine 0 given --main_process_ip $nobody:"
  expect_exit 0 2 2 "$t0"
  expect_in "$work/notmine.h0.log" "main_process_ip $nobody is not an address of this machine"

  take_port; port0=$port; take_port
  t0=$EPOCHREALTIME
  start_host wrongport 0 2 4 30 "$(host_addr 0)" "$port0" --rdzv_conf join_timeout=5 "${SLEEPER[@]}"
  start_host wrongport 1 2 4 30 "$(host_addr 0)" "$port" --rdzv_conf join_timeout=5 "${SLEEPER[@]}"
  wait_hosts || true
  echo "machine 0 on port $port0, machine 1 told $port, join_timeout=5:"
  expect_exit 0 1 10 "$t0"
  expect_exit 1 1 10 "$t0"
  expect_in "$work/wrongport.h0.log" "machine 1 of 2 did not join within 5 s"
  expect_in "$work/wrongport.h1.log" "could not reach machine 0's launcher" "$(host_addr 0):$((port + 1))"
  hosts_empty_now || bad=1
  ((bad == 0)) || { show_logs noreach; show_logs notmine; show_logs wrongport; return 1; }
}

# accel-train with checkpoints: an uninterrupted run of 3 hosts x 2 emulated on one host
# (layout_run: the same order of sums), then 3 hosts x 2 whose
# worker on host 2 is SIGKILLed once a checkpoint exists; one shared directory, as the hosts share
# /tmp as a cluster shares its file system.
case_restart() {
  local bad=0 k t0 victim ref got train=("$build/bin/accel-train" --steps 200 --checkpoint_every 25 --log_every 0)
  t0=$EPOCHREALTIME
  layout_run restart-ref 3 6 "${train[@]}" --checkpoint_dir "$work/ckpt-ref" --resume ||
    { echo "the one-host reference run failed"; show_logs restart-ref; return 1; }
  ref=$(crc_in "$work/restart-ref.log")
  echo "3 hosts x 2 emulated on one host, uninterrupted: weights crc32 $ref ($(since "$t0") s)"
  expect_in "$work/restart-ref.log" "no checkpoint in $work/ckpt-ref yet: starting from step 0" \
    "checkpoint saved at step 25:"

  t0=$EPOCHREALTIME
  start_hosts restart 3 6 60 --max_restarts 1 "${train[@]}" --checkpoint_dir "$work/ckpt" --resume
  if ! wait_until 30 grep -q 'checkpoint saved at step' "$work/restart.h0.log"; then
    echo "no checkpoint within 30 s"; stop_hosts; show_logs restart; return 1
  fi
  victim=$(ip netns pids "$(host_ns 2)" | xargs -r ps -o pid=,comm= -p | awk '$2 == "accel-train" { print $1; exit }')
  [[ -n $victim ]] || { echo "no accel-train on host 2"; stop_hosts; show_logs restart; return 1; }
  echo "SIGKILL to host 2's accel-train pid $victim at $(since "$t0") s, after" \
       "$(grep -o 'checkpoint saved at step [0-9]*' "$work/restart.h0.log" | tail -n 1)"
  kill -KILL "$victim"
  wait_hosts || true
  hosts_empty_now || bad=1
  for k in 0 1 2; do
    expect_exit "$k" 0 60 "$t0"
    expect_in "$work/restart.h$k.log" "on machine 2 (" "was killed by signal SIGKILL" \
      "restarting all workers (restart 1 of 1)" \
      "[round 1] every worker finished, after 1 restart(s)"
  done
  expect_in "$work/restart.h0.log" "no checkpoint in $work/ckpt yet: starting from step 0" "resumed from step"
  grep -o 'resumed from step [0-9]*' "$work/restart.h0.log" || true
  got=$(crc_in "$work/restart.h0.log")
  echo "weights crc32: 3 hosts x 2 with a restart = ${got:-none}, emulated uninterrupted = $ref"
  [[ -n $ref && $got == "$ref" ]] || bad=1
  ((bad == 0)) || { show_logs restart; return 1; }
}

# Two hosts with a checkpoint directory each, host 1's a step behind (no step-9, latest names
# step-6): resuming must fail on both hosts with the one message naming rank 1, its host and what
# it found, not resume rank 0 from step 9 and rank 1 from step 6 and hang.
case_resume_disagree() {
  local bad=0 k t0 train=("$build/bin/accel-train" --steps 12 --checkpoint_every 3 --log_every 0)
  launch_hosts ckpt 2 2 60 "${train[@]}" --steps 9 --checkpoint_dir "$work/ck" ||
    { echo "the run that saves the checkpoints failed"; show_logs ckpt; return 1; }
  for k in 0 1; do cp -a "$work/ck" "$work/ck-h$k"; done
  rm -rf "$work/ck-h1/step-9"
  echo step-6 >"$work/ck-h1/latest"
  t0=$EPOCHREALTIME
  take_port
  for k in 0 1; do
    start_host resume "$k" 2 2 60 "$(host_addr 0)" "$port" "${train[@]}" --checkpoint_dir "$work/ck-h$k" --resume
  done
  wait_hosts || true
  for k in 0 1; do
    expect_exit "$k" 1 20 "$t0"
    expect_in "$work/resume.h$k.log" "the ranks cannot all resume from the checkpoint rank 0 chose ($work/ck-h0/step-9, step 9)" \
      "rank 1 on host" "$work/ck-h1/step-9 does not exist here (its latest names step-6)"
  done
  grep -m1 -o 'the ranks cannot all resume.*' "$work/resume.h1.log" || true
  ((bad == 0)) || { show_logs resume; return 1; }
}

case_dry_run() {
  local bad=0 k port
  unset GLOO_SOCKET_IFNAME NCCL_SOCKET_IFNAME
  take_port
  for k in 0 1; do
    on_host "$k" timeout -k 5 20 "$build/bin/accel" launch --dry_run --cpu --num_machines 2 \
      --machine_rank "$k" --num_processes 4 --main_process_ip "$(host_addr 0)" --main_process_port "$port" \
      --no_python true >"$work/dry.h$k.log" 2>&1 || { echo "host $k: --dry_run failed"; bad=1; }
    expect_in "$work/dry.h$k.log" "  GLOO_SOCKET_IFNAME=$CLUSTER_HOST_IFNAME" "  NCCL_SOCKET_IFNAME=$CLUSTER_HOST_IFNAME"
    grep 'network:' "$work/dry.h$k.log" >"$work/dry.note$k" || true
    expect_in "$work/dry.note$k" "from $(host_addr "$k") on $CLUSTER_HOST_IFNAME"
    sed "s/^/host $k: /" "$work/dry.note$k"
  done
  ((bad == 0)) || { show_logs dry; return 1; }
}

# deepspeed_no_ssh: DeepSpeed's own multi-node form without ssh (`deepspeed --hostfile H
# --no_ssh --node_rank K`, as a scheduler starts one per node): `accel deepspeed` on 2 hosts x 2
# runs tests/python/ddp_gloo.py (PyTorch DDP over Gloo, Debian's torch) across them with
# DeepSpeed's worker variables; rank 0 reports the world it met.
case_deepspeed_no_ssh() {
  local k
  if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "Debian's python3-torch is not installed for /usr/bin/python3"; return 77
  fi
  printf 'node0 slots=2\nnode1 slots=2\n' >"$work/ds_hostfile"
  take_port
  for k in 0 1; do
    on_host_bg "$k" env ACCEL_PYTHON=/usr/bin/python3 GLOO_SOCKET_IFNAME="$CLUSTER_HOST_IFNAME" \
      timeout -k 5 90 "$build/bin/accel" deepspeed --hostfile "$work/ds_hostfile" --no_ssh --node_rank "$k" \
      --master_addr "$(host_addr 0)" --master_port "$port" --no_local_rank "$root/tests/python/ddp_gloo.py" \
      >"$work/dsnossh.h$k.log" 2>&1
    HOST_OF[$CLUSTER_LAST_PID]=$k
  done
  wait_hosts || { echo "the 2-host accel deepspeed --no_ssh run failed"; show_logs dsnossh; return 1; }
  grep -q 'rank 0\] ddp_gloo ok world_size=4' "$work/dsnossh.h0.log" ||
    { echo "rank 0 did not report ddp_gloo ok world_size=4"; show_logs dsnossh; return 1; }
  grep 'ddp_gloo ok' "$work/dsnossh.h0.log"
}
