#!/usr/bin/env bash
# sbatch_2x8.sh - example Slurm batch script: one training job on 2 nodes x 8 GPUs (16 ranks)
# started with `accel launch`. Copy it, adjust the #SBATCH lines and the last line, then:
#   sbatch scripts/slurm/sbatch_2x8.sh
#
# How accel uses Slurm: inside a Slurm allocation (SLURM_JOB_ID is set) `accel launch` fills in
# what you would otherwise pass by hand:
#   SLURM_NODEID                     -> --machine_rank       (0 on the first node, 1 on the second)
#   SLURM_NNODES                     -> --num_machines       (2)
#   first host of SLURM_JOB_NODELIST -> --main_process_ip    (rank 0's node hosts the rendezvous)
#   SLURM_GPUS_ON_NODE               -> processes per machine (8, so --num_processes 16 in all)
# Flags given on the command line beat what is detected from Slurm, which in turn beats the
# config file for these placement settings (a config file cannot know which node it runs on).
# SLURM_STEP_NODELIST / SLURM_STEP_NUM_NODES (set by srun) are preferred when present.
#
# One launcher per node: `accel launch` starts all 8 worker processes of its node itself, so
# Slurm must start exactly ONE task per node (--ntasks-per-node=1 below, and `srun` to run the
# launcher on every node of the allocation). Do not use --ntasks-per-node=8: that would start
# 8 launchers per node, each spawning 8 workers.
#
#SBATCH --job-name=accel-2x8
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=64
#SBATCH --mem=0
#SBATCH --time=04:00:00
#SBATCH --output=%x-%j.out
#SBATCH --error=%x-%j.err
# (--cpus-per-task: all the node's cores for the launcher and its 8 workers; adjust to your
#  nodes. --mem=0: all of the node's memory. Add --partition/--account as your site requires.)

set -euo pipefail

# The rendezvous port on the main node. It must be free there and should be unique per job, so
# that two jobs sharing a node do not collide; derive it from the job id. Without
# --main_process_port accel uses 29500 (the torchrun/Accelerate default).
export MASTER_PORT=$((29500 + SLURM_JOB_ID % 1000))

# Optional: CPU threads per worker (OMP_NUM_THREADS). Without it accel divides the node's
# physical cores among its 8 workers; to choose, add e.g.
#   --num_cpu_threads_per_process $((SLURM_CPUS_PER_TASK / 8))
# to the `accel launch` line below.

echo "job $SLURM_JOB_ID: nodes $SLURM_JOB_NODELIST, main port $MASTER_PORT"

# One `accel launch` per node (srun runs one task on each node, see above). --main_process_port
# passes the port explicitly; --main_process_ip, --machine_rank, --num_machines and the number
# of processes come from Slurm and can be given here too to override the detection.
srun --kill-on-bad-exit=1 \
  accel launch --main_process_port "$MASTER_PORT" \
  train.py --your-args
