#!/usr/bin/env bash
# `baton train --data-parallel 2` under mpiexec, end to end: the two processes log exactly the losses
# and evaluation of the in-process run with 2 replicas, rank 0 alone prints and writes, the job's
# checkpoint resumes on one device and with 4 processes, and a rank killed mid-run ends the job
# quickly, naming it.
# Usage: run_mpi_train.sh <baton> <mpiexec> <its arguments...>
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"
losses() { grep -o '"loss":[^,}]*' "$1"; }

common=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --log-every 1
        --eval-every 1 --lr 0.05 --data-parallel 2)

echo "== in-process, 2 replicas"
"$baton" "${common[@]}" --metrics "$dir/inproc.jsonl" >"$dir/inproc.out" 2>&1 || { cat "$dir/inproc.out"; fail "the in-process run failed"; }

echo "== mpiexec -n 2"
"${mpiexec[@]}" -n 2 "$baton" "${common[@]}" --metrics "$dir/mpi.jsonl" --checkpoint-dir "$dir/ckpt" \
  >"$dir/mpi.out" 2>&1
status=$?
cat "$dir/mpi.out"
[[ $status -eq 0 ]] || fail "the MPI run exited with status $status"
[[ $(grep -c 'data parallel: 2 replicas (one per process' "$dir/mpi.out") -eq 1 ]] || fail "rank 0 alone should print the setup line once"
[[ $(grep -c '^done after 4 steps' "$dir/mpi.out") -eq 1 ]] || fail "rank 0 alone should print the summary once"
if [[ "$(losses "$dir/inproc.jsonl")" != "$(losses "$dir/mpi.jsonl")" ]]; then
  fail "the MPI run's losses differ from the in-process run's:"
  paste <(losses "$dir/inproc.jsonl") <(losses "$dir/mpi.jsonl") >&2
fi
[[ $(losses "$dir/mpi.jsonl" | wc -l) -eq 5 ]] || fail "expected 4 train lines and 1 eval line in the metrics"
[[ -d "$dir/ckpt/step-00000004" ]] || fail "no checkpoint of step 4"
cp -r "$dir/ckpt" "$dir/ckpt4"  # each resume below writes its own later checkpoints

echo "== --data-parallel that differs from the process count: an error on every rank"
"${mpiexec[@]}" -n 2 "$baton" train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 1 \
  --data-parallel 4 >"$dir/mismatch.out" 2>&1 && fail "a job with --data-parallel 4 on 2 processes succeeded"
# Each rank checks before MPI starts; mpirun may end the second before it prints, so at least one line.
grep -q 'Open MPI started 2 processes: .* instead of --data-parallel 4' "$dir/mismatch.out" ||
  { cat "$dir/mismatch.out"; fail "no rank named the mismatch"; }

echo "== the job's checkpoint resumes on one device"
"$baton" train --resume "$dir/ckpt" --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 6 \
  --workers 1 --log-every 1 --eval-every 0 --lr 0.05 --device cpu >"$dir/resume.out" 2>&1 || fail "resuming on one device failed"
grep -q 'at step 4' "$dir/resume.out" || { cat "$dir/resume.out"; fail "the run did not resume at step 4"; }

echo "== and under mpiexec -n 4"
"${mpiexec[@]}" -n 4 "$baton" train --resume "$dir/ckpt4" --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 \
  --steps 6 --workers 1 --log-every 1 --eval-every 0 --lr 0.05 --data-parallel 4 >"$dir/resume4.out" 2>&1 ||
  { cat "$dir/resume4.out"; fail "resuming with 4 processes failed"; }
grep -q 'at step 4' "$dir/resume4.out" || { cat "$dir/resume4.out"; fail "the 4-process run did not resume at step 4"; }
[[ $(grep -c '^done after 6 steps' "$dir/resume4.out") -eq 1 ]] || fail "the 4-process run should end at step 6, printed once"

echo "== a rank killed mid-run"
kill_rank_mid_run 1 2 --data-parallel 2
[[ $failed -eq 0 ]] && echo "run_mpi_train: passed"
exit $failed
