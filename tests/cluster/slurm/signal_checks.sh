# shellcheck shell=bash
# signal_checks.sh -- checks 6 and 7 of slurm_test.sh (sourced by it, after the accel checks):
# SLURM's warning signal reaches `accel launch`'s workers, which write a last checkpoint, and the
# job ends cleanly. Both jobs are scripts/slurm/sbatch_cpu_2x2.sh (2 nodes x 2 CPU workers)
# running checkpoint_worker.py. SLURM signals every process of a job step (slurmstepd through
# proctrack): both launchers, which must live on and forward it, and the workers themselves.
# Uses slurm_test.sh's say/pass/fail/indent/secs, W, JOB_TIMEOUT, HERE, and SBATCH_CPU, ACCEL.
#   signal_check_scancel   once the 4 workers' handlers are installed, `scancel --signal=USR1`:
#       passes when every rank wrote its checkpoint on its node (ranks 0,1 on h0, 2,3 on h1),
#       both launchers said they forwarded SIGUSR1, and the job is COMPLETED 0:0.
#   signal_check_trigger   `sbatch --time=2 --signal=USR1@90`, SLURM's own trigger: the same.
#       slurmctld tests time limits every 30 s (PERIODIC_TIMEOUT, compiled in: no slurm.conf
#       setting changes it) and sends the warning up to 30 s early, so a 2-minute job asking for
#       it 90 s before its end gets it at the first test after it starts, 0 to 30 s later. The
#       job is submitted when the next test is at least SIGNAL_LEAD s (default 6) away, read from
#       slurmctld's debug2 log, so the signal never comes before the launchers and handlers exist.

# T_SIG_SCANCEL T_SIG_TRIGGER T_SIG_DELAY: timings (s) for slurm_test.sh's TIMING line.
# shellcheck disable=SC2034
SIGNAL_LEAD=${SIGNAL_LEAD:-6}
T_SIG_SCANCEL=- T_SIG_TRIGGER=- T_SIG_DELAY=-

# signal_job OUT DIR SBATCH_ARGS...: submits the template with checkpoint_worker.py DIR; prints the id.
signal_job() {
  local out=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  (cd "$W" && slurm_submit "$out" "$@" "$SBATCH_CPU" "$HERE/checkpoint_worker.py" "$dir")
}

# every_rank DIR NAME TIMEOUT: waits until DIR/NAME.0 .. NAME.3 exist.
every_rank() {
  for _ in $(seq 1 $(($3 * 10))); do
    if [ -e "$1/$2.0" ] && [ -e "$1/$2.1" ] && [ -e "$1/$2.2" ] && [ -e "$1/$2.3" ]; then return 0; fi
    sl_sleep 0.1
  done
  return 1
}

# next_timelimit_test: seconds from now until slurmctld next tests time limits, at the earliest: 30 s
# after its last test as logged, or before the first one 30 s after it started (its background
# thread starts the period in the second of the log's first line, or the next).
next_timelimit_test() {
  local log=$SL_DIR/hosts/ctl/slurmctld.log last
  last=$(sed -n 's/^\[\([0-9T:.-]*\)\] debug2: Testing job time limits.*/\1/p' "$log" | tail -n 1)
  [ -n "$last" ] || last=$(sed -n '1s/^\[\([0-9T:.-]*\)\].*/\1/p' "$log")
  awk -v l="$(date -d "${last/T/ }" +%s)" -v n="$(sl_now)" 'BEGIN { printf "%.2f", l + 30 - n }'
}

# submit_ahead_of_test ARGS...: waits until slurmctld's next time-limit test is at least SIGNAL_LEAD
# s away (and not overdue: then its line is awaited), then signal_job ARGS...; prints the id.
submit_ahead_of_test() {
  local next
  for _ in $(seq 1 80); do
    next=$(next_timelimit_test)
    if awk -v n="$next" -v l="$SIGNAL_LEAD" 'BEGIN { exit !(n >= l) }'; then break; fi
    sl_sleep 0.5
  done
  signal_job "$@"
}

# signal_verdict ID OUT DIR WHAT: the checks common to both jobs.
signal_verdict() {
  local id=$1 out=$2 dir=$3 what=$4 res r line
  res=$(slurm_wait_job "$id" "$JOB_TIMEOUT") || true
  say "$what job $id: $res"
  indent <"$out" || true
  if [ "$res" = "COMPLETED 0:0" ]; then pass "$what: job completed"; else fail "$what: job $res"; fi
  for r in 0 1 2 3; do
    line=$(cat "$dir/ckpt.$r" 2>/dev/null || true)
    if [[ $line == "checkpoint of rank $r on h$((r / 2)) "* ]]; then pass "$what: $line"; else fail "$what: rank $r wrote no checkpoint on h$((r / 2)) (${line:-no file})"; fi
  done
  if [ "$(grep -c 'received SIGUSR1: forwarding it to every worker' "$out")" = 2 ]; then
    pass "$what: both launchers forwarded SIGUSR1 and lived on"
  else
    fail "$what: not 2 lines 'received SIGUSR1: forwarding it to every worker'"
  fi
}

signal_check_scancel() {
  local id dir=$W/sig_scancel t0
  t0=$(sl_now)
  id=$(signal_job "$W/sig_scancel.out" "$dir" --time=5) || { fail "sbatch of the scancel USR1 job"; return 0; }
  if every_rank "$dir" ready "$JOB_TIMEOUT"; then
    scancel --signal=USR1 "$id"
  else
    fail "scancel USR1: the 4 workers' handlers not installed within ${JOB_TIMEOUT}s"
  fi
  signal_verdict "$id" "$W/sig_scancel.out" "$dir" "scancel --signal=USR1"
  T_SIG_SCANCEL=$(secs "$t0" "$(sl_now)")
}

signal_check_trigger() {
  local id dir=$W/sig_trigger t0 submitted first
  t0=$(sl_now)
  id=$(submit_ahead_of_test "$W/sig_trigger.out" "$dir" --time=2 --signal=USR1@90) || { fail "sbatch of the USR1@90 job"; return 0; }
  submitted=$(sl_now)
  signal_verdict "$id" "$W/sig_trigger.out" "$dir" "--signal=USR1@90"
  T_SIG_TRIGGER=$(secs "$t0" "$(sl_now)")
  first=$(sed -n 's/.* at \([0-9.]*\)$/\1/p' "$dir"/ckpt.* 2>/dev/null | sort -n | head -n 1)
  if [ -n "$first" ]; then T_SIG_DELAY=$(secs "$submitted" "$first"); fi
  say "USR1@90: submitted $(secs "$t0" "$submitted") after its check began, signalled $T_SIG_DELAY after submission"
}
