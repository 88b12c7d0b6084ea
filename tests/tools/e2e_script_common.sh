# Sourced by the end-to-end scripts of tests/tools (run_mpi_train.sh, run_mpi_hybrid.sh,
# run_mpi_bench.sh, run_gpu_train.sh): reads "<baton> [<mpiexec> <its arguments...>]" into $baton and
# the array mpiexec, makes a scratch folder $dir removed on exit, fail() records a failure (the
# script exits with $failed at its end), losses reads a metrics file, check_job_like_in_process
# checks an MPI job against the same run in one process, and kill_rank_mid_run checks a job that
# loses a rank.
baton=$1
shift
mpiexec=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() {
  echo "$(basename "$0" .sh): FAILED: $*" >&2
  failed=1
}

# The "loss" fields of a metrics file, a line each.
losses() { grep -o '"loss":[^,}]*' "$1"; }

# check_job_like_in_process STATUS PATTERN WHAT: the MPI job of 4 steps (its output $dir/mpi.out, metrics
# $dir/mpi.jsonl, checkpoints $dir/ckpt) exited with STATUS 0, rank 0 alone printed WHAT (a line
# matching PATTERN) and the summary, it logged exactly the losses and evaluation of the in-process run
# ($dir/inproc.jsonl) and saved a checkpoint of step 4.
check_job_like_in_process() {
  local status=$1 pattern=$2 what=$3
  cat "$dir/mpi.out"
  [[ $status -eq 0 ]] || fail "the MPI run exited with status $status"
  [[ $(grep -c "$pattern" "$dir/mpi.out") -eq 1 ]] || fail "rank 0 alone should print $what once"
  [[ $(grep -c '^done after 4 steps' "$dir/mpi.out") -eq 1 ]] || fail "rank 0 alone should print the summary once"
  if [[ "$(losses "$dir/inproc.jsonl")" != "$(losses "$dir/mpi.jsonl")" ]]; then
    fail "the MPI run's losses differ from the in-process run's:"
    paste <(losses "$dir/inproc.jsonl") <(losses "$dir/mpi.jsonl") >&2
  fi
  [[ $(losses "$dir/mpi.jsonl" | wc -l) -eq 5 ]] || fail "expected 4 train lines and 1 eval line in the metrics"
  [[ -d "$dir/ckpt/step-00000004" ]] || fail "no checkpoint of step 4"
}

# kill_rank_mid_run RANK NP TRAIN-ARGUMENTS...: starts `mpiexec -n NP baton train ARGUMENTS` on a long
# run of generated data (its own marker), kills rank RANK with SIGKILL once two metrics lines are
# written, and checks that the job ends with a non-zero status within 30 s, naming the rank, with no
# process left behind.
kill_rank_mid_run() {
  local rank=$1 np=$2
  shift 2
  local marker=synthetic:3x8x8:4:100000
  "${mpiexec[@]}" -n "$np" "$baton" train --model resnet20 --data "$marker" --batch-size 8 --steps 100000 \
    --workers 1 --log-every 1 --eval-every 0 "$@" --metrics "$dir/killed.jsonl" >"$dir/killed.out" 2>&1 &
  local job=$!
  for _ in $(seq 1 300); do
    [[ -s "$dir/killed.jsonl" && $(wc -l <"$dir/killed.jsonl") -ge 2 ]] && break
    sleep 0.1
  done
  local victim="" pid
  for pid in $(pgrep -f "$marker"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$rank"; then victim=$pid; fi
  done
  if [[ -z "$victim" ]]; then
    fail "rank $rank's process was not found"
    kill "$job" 2>/dev/null
    return
  fi
  local start=${EPOCHREALTIME/./}
  kill -9 "$victim"
  timeout 60 tail --pid="$job" -f /dev/null
  wait "$job"
  local status=$?
  local elapsed_ms=$(((${EPOCHREALTIME/./} - start) / 1000))
  cat "$dir/killed.out"
  [[ $status -ne 0 ]] || fail "the job exited with status 0 after rank $rank was killed"
  ((elapsed_ms < 30000)) || fail "the job took ${elapsed_ms} ms to end after rank $rank was killed"
  grep -Eq "rank $rank|\[\[[0-9]+,[0-9]+\],$rank\]" "$dir/killed.out" || fail "no line names rank $rank"
  [[ -z "$(pgrep -f "$marker")" ]] || fail "processes of the job are still running"
  echo "$(basename "$0" .sh): the job ended with status $status ${elapsed_ms} ms after rank $rank was killed"
}
