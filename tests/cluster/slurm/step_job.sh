#!/bin/bash
# step_job.sh CMD [ARGS...] -- sbatch script of the SLURM cluster test: runs
# CMD as one job step over the whole allocation (srun: one task per node with
# --ntasks-per-node=1). The batch part itself runs on the first node (h0).
#   sbatch --nodes=2 --ntasks-per-node=1 step_job.sh probe.sh
# --kill-on-bad-exit: one failing task ends the step on every node, as a
# launcher that loses a node should.
set -u
echo "batch: host=$(hostname) job=$SLURM_JOB_ID nodelist=$SLURM_JOB_NODELIST nnodes=$SLURM_NNODES"
exec srun --kill-on-bad-exit=1 "$@"
