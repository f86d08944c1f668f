#!/usr/bin/env bash
# sbatch_cpu_2x2.sh - example Slurm batch script, the CPU variant of sbatch_2x8.sh: one job on
# 2 nodes x 2 CPU worker processes (4 ranks, Gloo over the network) started with `accel launch`.
#   sbatch scripts/slurm/sbatch_cpu_2x2.sh                          # accel-train, 200 steps
#   sbatch scripts/slurm/sbatch_cpu_2x2.sh PROGRAM [ARGS...]        # your program instead
#   ACCEL=/path/to/build/bin/accel sbatch scripts/slurm/sbatch_cpu_2x2.sh ...
# Environment (sbatch passes the submitting shell's environment to the job):
#   ACCEL        the accel executable (default: `accel` on PATH)
# Without arguments it runs accel-train from ACCEL's directory (else from PATH).
#
# Placement comes from Slurm, read by `accel launch` itself (see sbatch_2x8.sh):
#   SLURM_NODEID -> --machine_rank, SLURM_NNODES -> --num_machines,
#   first host of SLURM_JOB_NODELIST -> --main_process_ip.
# There are no GPUs, so the process count cannot come from SLURM_GPUS_ON_NODE: --num_processes
# is the world size (all machines together), and each node's launcher starts
# num_processes / num_machines = 2 of them.
#
# One launcher per node, as in the GPU template: --ntasks-per-node=1 and `srun`.
#
#SBATCH --job-name=accel-cpu-2x2
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:30:00
#SBATCH --output=%x-%j.out
# (--cpus-per-task: the CPUs of a node for its launcher and its 2 workers; adjust to your nodes.
#  No --error: the launcher's notes and the workers' stderr go to the same file as their output.
#  Add --partition/--account as your site requires.)

set -euo pipefail

ACCEL=${ACCEL:-accel}
if [ $# -eq 0 ]; then
  train=$(dirname "$(command -v "$ACCEL")")/accel-train
  [ -x "$train" ] || train=accel-train
  set -- "$train" --steps 200
fi

# The rendezvous port on the main node, derived from the job id as in sbatch_2x8.sh. The job
# channel of a multi-machine launch uses the next port (--job_port, default port + 1), so the
# ports step by 2: two jobs with consecutive ids that share a first node do not collide.
port=$((29500 + 2 * (SLURM_JOB_ID % 1000)))

echo "job $SLURM_JOB_ID: nodes $SLURM_JOB_NODELIST, main port $port, accel $(command -v "$ACCEL")"

# One `accel launch` per node; --main_process_ip, --machine_rank and --num_machines come from
# Slurm (give them here to override the detection). --cpu: CPU workers, Gloo between them.
srun --kill-on-bad-exit=1 \
  "$ACCEL" launch --cpu --num_processes 4 --main_process_port "$port" \
  "$@"
