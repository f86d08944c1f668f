# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# ssh_cases.sh - the cases of cluster_test.sh in which one `accel launch --hostfile` on host 0
# starts every host's launcher over ssh: a real OpenSSH server in each host (ssh_hosts.sh), keys
# the test made, given with --ssh_args "-F …" (nothing of ~/.ssh is read or written). Sourced by
# cluster_test.sh (its on_host_bg, wait_hosts, show_logs, take_port, crc_in, $work, $build).
#   ssh_hostfile     hosts of 2, 1 and 3 slots: accel-train's weights CRC equals the layout
#                    emulated on one host; ddp_gloo.py (Debian's torch) completes; every rank's
#                    line arrives prefixed with its host; a .deepspeed_env variable reaches every
#                    worker; the job's token is in no process's command line on any host; the
#                    time from the command to every rank past its first barrier, 2 and 4 hosts
#   ssh_filters      --include, --exclude, --num_nodes/--num_gpus pick the hosts and slots
#   ssh_interrupt    SIGINT to the head: no process of the job on any host within 5 s
#   ssh_link_down    a host's link down mid-run (--heartbeat_timeout 4): every host's processes
#                    gone within the heartbeat timeout, the head's message naming the host
#   ssh_unreachable  a host whose sshd is down, a refused key, a host without accel: a clear
#                    error within 10 s naming the host, nothing left anywhere
#   ssh_deepspeed    Accelerate's own DeepSpeed config file: pdsh with deepspeed_hostfile runs;
#                    openmpi runs through Open MPI over the same sshd; `accel deepspeed -H hosts`
#                    (DeepSpeed's own command line) starts the 3 hosts, DeepSpeed's variables in
#                    every rank; nossh runs one launcher per host; mpich, mvapich, impi (not
#                    installed) and slurm (no allocation) are refused at once with exit 2
# The cases are called through run_case, which shellcheck cannot follow.
# shellcheck disable=SC2317,SC2154

SSH_STEPS=30
# Every worker says it is up (after its launcher started it), then sleeps until stopped.
# shellcheck disable=SC2016
SSH_SLEEPER=(--no_python sh -c 'echo "rank $RANK up on $ACCEL_MACHINE"; exec sleep 60')

# ssh_up N: sshd on hosts 0..N-1 (names node0..), a working folder for the head, its hostfile.
ssh_up() {
  ssh_hosts_up "$1" >"$work/sshd.up" 2>&1 || { cat "$work/sshd.up"; return 1; }
  mkdir -p "$work/head"
  cd "$work/head" || return 1
}

# head TAG LIMIT ARGS...: host 0's `accel launch --cpu --ssh_args … ARGS` in the background,
# under `timeout LIMIT`, from $work/head. Log: $work/TAG.h0.log.
head_launch() {
  local tag=$1 limit=$2
  shift 2
  take_port
  on_host_bg 0 timeout -k 5 "$limit" "$build/bin/accel" launch --grace_period 3 --main_process_port "$port" \
    --ssh_args "$SSH_HOSTS_ARGS" "$@" >"$work/$tag.h0.log" 2>&1
  HOST_OF[$CLUSTER_LAST_PID]=0
}

# Processes of a job left in any host: everything but the sshd listeners (zombies count as gone).
job_processes() {
  local k pid state listeners=" ${SSH_HOSTS_PIDS[*]} " out=()
  for ((k = 0; k < HOSTS; k++)); do
    for pid in $(ip netns pids "$(host_ns "$k")"); do
      [[ $listeners == *" $pid "* ]] && continue
      state=$(awk '{print $2 $3}' "/proc/$pid/stat" 2>/dev/null) || continue
      [[ $state == *Z || $state == "(sshd)"* ]] || out+=("$pid")
    done
  done
  ((${#out[@]})) || return 1
  ps -o pid=,args= -p "$(IFS=,; echo "${out[*]}")" || true
}
no_job_processes() { ! job_processes >/dev/null; }

# ssh_lines_up TAG N: at least N workers of TAG said "up".
ssh_lines_up() { (($(grep -c ' up on ' "$work/$1.h0.log") >= $2)); }

# emulated_counts ACCEL WORK TAG N... -- PROGRAM...: hosts of N processes each, emulated on one
# host (each launcher its own ACCEL_HOST_ID), as cluster_test.sh's layout_run does.
emulated_counts() {
  local accel=$1 work=$2 tag=$3 k=0 pids=() rc=0 counts=()
  shift 3
  while [[ $1 != -- ]]; do counts+=("$1"); shift; done
  shift
  ip link set lo up || return 1
  for n in "${counts[@]}"; do
    ACCEL_HOST_ID=emulated-$k timeout -k 5 60 "$accel" launch --cpu --quiet --nnodes "${#counts[@]}" \
      --node_rank "$k" --nproc_per_node "$n" --master_addr 127.0.0.1 --master_port 29500 "$@" \
      >"$work/$tag$([[ $k == 0 ]] || echo ".m$k").log" 2>&1 &
    pids+=($!)
    k=$((k + 1))
  done
  for k in "${pids[@]}"; do wait "$k" || rc=$?; done
  return "$rc"
}

# Samples every command line on the machine (all hosts share its PIDs) until $work/ps.stop exists.
sample_ps() {
  while [[ ! -e $work/ps.stop ]]; do ps -eo args >>"$work/ps.samples"; sleep 0.1; done
}

# first_barrier H: hosts of 2 processes each, one command on host 0; prints the seconds from the
# command to the last rank past its first barrier (runtime_worker barrier: the store's rendezvous,
# the process groups, a barrier, then the wall clock).
first_barrier() {
  local h=$1 k t0 last
  : >"$work/hosts$h"
  for ((k = 0; k < h; k++)); do echo "node$k slots=2" >>"$work/hosts$h"; done
  t0=$EPOCHREALTIME
  head_launch barrier$h 60 --cpu --hostfile "$work/hosts$h" "$build/bin/runtime_worker" barrier -1
  wait_hosts >/dev/null || { show_logs barrier$h; return 1; }
  (($(grep -c 'past barrier at' "$work/barrier$h.h0.log") == 2 * h)) || { show_logs barrier$h; return 1; }
  last=$(sed -n 's/.*past barrier at \([0-9.]*\).*/\1/p' "$work/barrier$h.h0.log" | sort -n | tail -n 1)
  since "$t0" "$last"
}

SSH_TRIALS=5

# barrier_trials H: first_barrier SSH_TRIALS times; prints "median M s (max X s)".
barrier_trials() {
  local i times=()
  for ((i = 0; i < SSH_TRIALS; i++)); do times+=("$(first_barrier "$1")") || return 1; done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "median %s s (max %s s)", v[int((NR + 1) / 2)], v[NR] }'
}

case_ssh_hostfile() {
  local bad=0 got want token t2 t4
  pod_python || return 77
  ssh_up 4 || return 1
  printf 'node0 slots=2\nnode1 slots=1  # the smallest\nnode2 slots=3\n' >hosts
  printf 'DS_PROBE=from .deepspeed_env\nGLOO_SOCKET_IFNAME=%s\n' "$CLUSTER_HOST_IFNAME" >.deepspeed_env
  unshare --net -- bash -c "$(declare -f emulated_counts); emulated_counts \"\$@\"" emulated_counts \
    "$build/bin/accel" "$work" sshref 2 1 3 -- "$build/bin/accel-train" --steps "$SSH_STEPS" --log_every 0 ||
    { echo "the one-host reference failed"; show_logs sshref; return 1; }
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  rm -f "$work/ps.stop" "$work/ps.samples"
  sample_ps &
  local sampler=$!
  ACCEL_STORE_TOKEN=$token head_launch train 90 --cpu --hostfile hosts "$build/bin/accel-train" --steps "$SSH_STEPS" \
    --log_every 0
  wait_hosts || { echo "the hostfile run failed"; show_logs train; bad=1; }
  touch "$work/ps.stop"
  wait "$sampler" || true
  got=$(crc_in "$work/train.h0.log")
  want=$(crc_in "$work/sshref.log")
  grep -q "after $SSH_STEPS steps (6 processes" "$work/train.h0.log" ||
    { echo "rank 0 does not report 6 processes"; bad=1; }
  echo "weights crc32: hosts of 2, 1, 3 slots from one command = $got, the layout emulated on one host = $want"
  [[ -n $got && $got == "$want" ]] || bad=1
  echo "command lines sampled on every host: $(grep -c . "$work/ps.samples"), with the token: $(grep -c "$token" "$work/ps.samples")"
  ! grep -q "$token" "$work/ps.samples" || bad=1
  head_launch probe 60 --cpu --hostfile hosts --no_python sh -c 'echo "probe rank $RANK of $WORLD_SIZE: $DS_PROBE"'
  wait_hosts || bad=1
  for r in 0 1; do expect_in "$work/probe.h0.log" "[node0:rank $r] probe rank $r of 6: from .deepspeed_env"; done
  expect_in "$work/probe.h0.log" "[node1:rank 2] probe rank 2 of 6: from .deepspeed_env"
  for r in 3 4 5; do expect_in "$work/probe.h0.log" "[node2:rank $r] probe rank $r of 6: from .deepspeed_env"; done
  head_launch ddp 90 --cpu --hostfile hosts --python /usr/bin/python3 "$root/tests/python/ddp_gloo.py"
  wait_hosts || bad=1
  grep 'ddp_gloo ok world_size=6' "$work/ddp.h0.log" || { echo "ddp_gloo.py did not complete"; bad=1; }
  t2=$(barrier_trials 2) || bad=1
  t4=$(barrier_trials 4) || bad=1
  echo "from the command to every rank past its first barrier, $SSH_TRIALS trials: 2 hosts x 2 $t2, 4 hosts x 2 $t4"
  ((bad == 0)) || { show_logs train; show_logs probe; show_logs ddp; return 1; }
}

case_ssh_filters() {
  local bad=0
  ssh_up 3 || return 1
  printf 'node0 slots=2\nnode1 slots=2\nnode2 slots=2\n' >hosts
  # shellcheck disable=SC2016
  local probe=(--no_python sh -c 'echo "rank $RANK of $WORLD_SIZE on $ACCEL_MACHINE"')
  head_launch include 30 --cpu --hostfile hosts --include 'node0@node2:0' "${probe[@]}"
  head_launch exclude 30 --cpu --hostfile hosts --exclude 'node1' "${probe[@]}"
  wait_hosts || bad=1
  expect_in "$work/include.h0.log" "rank 0 of 3 on node0" "rank 1 of 3 on node0" "rank 2 of 3 on node2"
  expect_in "$work/exclude.h0.log" "rank 0 of 4 on node0" "rank 1 of 4 on node0" "rank 2 of 4 on node2" \
    "rank 3 of 4 on node2"
  head_launch limits 30 --cpu --hostfile hosts --num_nodes 2 --num_gpus 1 "${probe[@]}"
  wait_hosts || bad=1
  expect_in "$work/limits.h0.log" "rank 0 of 2 on node0" "rank 1 of 2 on node1"
  ! grep -q node1 "$work/include.h0.log" "$work/exclude.h0.log" || { echo "node1 ran although filtered out"; bad=1; }
  cat "$work/include.h0.log" "$work/exclude.h0.log" "$work/limits.h0.log" | grep ' on node' | sort
  ((bad == 0)) || { show_logs include; show_logs exclude; show_logs limits; return 1; }
}

case_ssh_interrupt() {
  local bad=0 t0 head
  ssh_up 3 || return 1
  printf 'node0 slots=2\nnode1 slots=1\nnode2 slots=2\n' >hosts
  head_launch int 60 --cpu --hostfile hosts "${SSH_SLEEPER[@]}"
  wait_until 20 ssh_lines_up int 5 || { echo "the workers did not start"; stop_hosts; show_logs int; return 1; }
  head=$(pgrep -f -- "--main_process_port $port --ssh_args" | head -n 1)
  t0=$EPOCHREALTIME
  kill -INT "$head"
  wait_until 5 no_job_processes || { echo "left 5 s after SIGINT:"; job_processes; bad=1; }
  echo "SIGINT to the head: every host empty after $(since "$t0") s"
  wait_hosts || true
  expect_exit 0 130 5 "$t0"
  ((bad == 0)) || { show_logs int; return 1; }
}

# The heartbeat timeout of ssh_link_down, and the slack allowed beyond it for the stop itself.
SSH_HEARTBEAT=4

case_ssh_link_down() {
  local bad=0 t0 gone2 gone
  ssh_up 3 || return 1
  printf 'node0 slots=2\nnode1 slots=2\nnode2 slots=2\n' >hosts
  head_launch lost 60 --cpu --hostfile hosts --heartbeat_timeout "$SSH_HEARTBEAT" "${SSH_SLEEPER[@]}"
  wait_until 20 ssh_lines_up lost 6 || { echo "the workers did not start"; stop_hosts; show_logs lost; return 1; }
  t0=$EPOCHREALTIME
  cluster_link_down 2
  # Host 2's sshd keeps its session until its own client-alive check, which is the server's
  # setting, not the job's: the job's processes are the launchers, the workers and the head's ssh.
  wait_until $((SSH_HEARTBEAT + 3)) host_quiet 2 || { echo "host 2's job not gone"; bad=1; }
  gone2=$(since "$t0")
  wait_until $((SSH_HEARTBEAT + 3)) no_job_processes || { echo "left after host 2's link went down:"; job_processes; bad=1; }
  gone=$(since "$t0")
  echo "host 2's link down, --heartbeat_timeout $SSH_HEARTBEAT: host 2's job gone after $gone2 s, every host's after $gone s"
  wait_hosts || true
  cluster_link_up 2
  [[ ${EXIT_RC[0]:-} == 1 ]] || { echo "the head exited ${EXIT_RC[0]:-none}, not 1"; bad=1; }
  expect_in "$work/lost.h0.log" "machine 2 (node2" "was lost"
  grep 'was lost' "$work/lost.h0.log" | head -n 2
  ((bad == 0)) || { show_logs lost; return 1; }
}

# host_quiet K: no process of the job in host K.
host_quiet() {
  local pid state listeners=" ${SSH_HOSTS_PIDS[*]} "
  for pid in $(ip netns pids "$(host_ns "$1")"); do
    [[ $listeners == *" $pid "* ]] && continue
    state=$(awk '{print $2 $3}' "/proc/$pid/stat" 2>/dev/null) || continue
    [[ $state == *Z || $state == "(sshd)"* ]] || return 1
  done
}

# unreachable TAG WHY ARGS...: a launch that must fail within 10 s with exit 1 or 2, naming node2
# and WHY, leaving nothing on any host.
unreachable() {
  local tag=$1 why=$2 t0 rc=0
  shift 2
  t0=$EPOCHREALTIME
  head_launch "$tag" 30 --cpu --hostfile hosts "$@" "${SSH_SLEEPER[@]}"
  wait_hosts >/dev/null || rc=$?
  echo "$tag: exit $rc after $(since "$t0") s: $(grep -m1 -E 'error' "$work/$tag.h0.log")"
  ((rc == 1 || rc == 2)) && at_most "$(since "$t0" "${EXIT_AT[0]}")" 10 || bad=1
  expect_in "$work/$tag.h0.log" "node2" "$why"
  wait_until 3 no_job_processes || { echo "left after $tag:"; job_processes; bad=1; }
}

# told_once TAG TEXT: ssh's complaint appears once in the head's output, inside accel's error.
told_once() {
  local n
  n=$(grep -c -- "$2" "$work/$1.h0.log")
  ((n == 1)) || { echo "$1: '$2' shown $n times, once expected"; bad=1; }
  grep -q -- "accel:   | .*$2" "$work/$1.h0.log" || { echo "$1: '$2' not inside accel's error"; bad=1; }
}

case_ssh_unreachable() {
  local bad=0
  ssh_up 3 || return 1
  printf 'node0 slots=1\nnode1 slots=1\nnode2 slots=1\n' >hosts
  ssh_host_stop 2
  unreachable refused "Connection refused"
  told_once refused "Connection refused"
  ssh_host_start 2 >/dev/null
  SSH_HOSTS_ARGS=$SSH_HOSTS_BAD_ARGS unreachable badkey "Permission denied"
  told_once badkey "Permission denied"
  printf 'node0 slots=1\nnode2 slots=1\n' >hosts
  ACCEL_REMOTE_ACCEL=/nonexistent/accel unreachable noaccel "no accel on host node2"
  ((bad == 0)) || { show_logs refused; show_logs badkey; show_logs noaccel; return 1; }
}

# ds_config FILE LAUNCHER: Accelerate's DeepSpeed config for 3 machines x 2 GPUs (the fake NVML's).
ds_config() {
  cat >"$1" <<EOF
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  deepspeed_hostfile: $work/head/hosts
  deepspeed_multinode_launcher: $2
  gradient_accumulation_steps: 1
  zero3_init_flag: false
  zero_stage: 2
distributed_type: DEEPSPEED
downcast_bf16: 'no'
machine_rank: 0
main_process_ip: node0
main_process_port: $port
main_training_function: main
mixed_precision: 'no'
num_machines: 3
num_processes: 6
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
EOF
}

# shellcheck disable=SC2016
DS_PROBE=(--no_python sh -c 'echo "ds rank ${RANK:-$OMPI_COMM_WORLD_RANK} of ${WORLD_SIZE:-$OMPI_COMM_WORLD_SIZE} on $(hostname) deepspeed=$ACCELERATE_USE_DEEPSPEED gpus=$FAKE_NVML_GPUS"')

case_ssh_deepspeed() {
  local bad=0 launcher rc k
  ssh_up 3 || return 1
  printf 'node0 slots=2\nnode1 slots=2\nnode2 slots=2\n' >hosts
  printf 'FAKE_NVML_GPUS=2\n' >.deepspeed_env
  export ACCEL_NVML_LIBRARY=$build/lib/libfake_nvml.so FAKE_NVML_GPUS=2
  take_port
  ds_config pdsh.yaml pdsh
  head_launch pdsh 60 --config_file pdsh.yaml "${DS_PROBE[@]}"
  wait_hosts || bad=1
  # Host 0 runs the head's own launcher, outside sshd's UTS namespace: its hostname is the machine's.
  expect_in "$work/pdsh.h0.log" "[node0:rank 1] ds rank 1 of 6 on "
  for k in 1 2; do expect_in "$work/pdsh.h0.log" "[node$k:rank $((2 * k + 1))] ds rank $((2 * k + 1)) of 6 on node$k deepspeed=true gpus=2"; done
  ds_config openmpi.yaml openmpi
  head_launch openmpi 60 --config_file openmpi.yaml "${DS_PROBE[@]}"
  wait_hosts || bad=1
  expect_in "$work/openmpi.h0.log" "[mpirun] ds rank 1 of 6 on "
  for k in 1 2; do expect_in "$work/openmpi.h0.log" "ds rank $((2 * k + 1)) of 6 on node$k deepspeed=true gpus=2"; done
  grep -h ' on node' "$work/pdsh.h0.log" "$work/openmpi.h0.log" | sort | sed -n '1p;$p'
  # DeepSpeed's own launcher's command line: `accel deepspeed -H hosts` starts the hosts as pdsh
  # would (accel's fleet over ssh); each rank gets DeepSpeed's variables.
  take_port
  on_host_bg 0 env ACCEL_SSH_ARGS="$SSH_HOSTS_ARGS" timeout -k 5 60 "$build/bin/accel" deepspeed --hostfile hosts \
    --master_port "$port" --no_local_rank --no_python sh -c \
    'echo "dsl rank $RANK of $WORLD_SIZE local $LOCAL_RANK/$LOCAL_SIZE node $CROSS_RANK/$CROSS_SIZE cvd $CUDA_VISIBLE_DEVICES"' \
    >"$work/dsl.h0.log" 2>&1
  HOST_OF[$CLUSTER_LAST_PID]=0
  wait_hosts || bad=1
  for k in 0 1 2; do
    expect_in "$work/dsl.h0.log" "dsl rank $((2 * k + 1)) of 6 local 1/2 node $k/3 cvd 0,1"
  done
  ds_config nossh.yaml nossh
  for k in 0 1 2; do
    on_host_bg "$k" env -C "$work/head" timeout -k 5 60 "$build/bin/accel" launch --config_file nossh.yaml \
      --machine_rank "$k" --main_process_ip "$(host_addr 0)" "${DS_PROBE[@]}" >"$work/nossh.h$k.log" 2>&1
    HOST_OF[$CLUSTER_LAST_PID]=$k
  done
  wait_hosts || bad=1
  expect_in "$work/nossh.h0.log" "ds rank 1 of 6" "nossh (deepspeed_config.deepspeed_multinode_launcher (config file)): one launcher per machine"
  for launcher in mpich mvapich impi slurm; do
    ds_config "$launcher.yaml" "$launcher"
    rc=0
    on_host 0 "$build/bin/accel" launch --config_file "$launcher.yaml" "${DS_PROBE[@]}" >"$work/$launcher.log" 2>&1 || rc=$?
    echo "$launcher: exit $rc: $(grep -m1 'error' "$work/$launcher.log")"
    ((rc == 2)) || bad=1
  done
  expect_in "$work/mpich.log" "apt install mpich"
  expect_in "$work/slurm.log" "SLURM allocation"
  no_job_processes || bad=1
  ((bad == 0)) || { show_logs pdsh; show_logs openmpi; show_logs dsl; show_logs nossh; return 1; }
}

# ssh_case FUNCTION: sshd on the hosts for the case, stopped after it whatever its outcome.
ssh_case() {
  local rc=0
  ssh_hosts_require >/dev/null || return 77
  "$@" || rc=$?
  cd "$work" || true
  ssh_hosts_down >/dev/null 2>&1 || true
  return "$rc"
}
