#!/usr/bin/env bash
# The hybrid across processes end to end: `mpiexec -n 4 baton train --groups 2 --stages 2` logs exactly
# the losses and evaluation of the same run in one process, rank 0 alone prints and writes (each
# process its own --trace file), its
# checkpoint resumes on one device and as a plain pipeline across 2 processes, a process count that
# does not match is refused, and a rank killed in the middle of a step ends the job quickly, naming it.
# Usage: run_mpi_hybrid.sh <baton> <mpiexec> <its arguments...>
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"
losses() { grep -o '"loss":[^,}]*' "$1"; }

common=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --log-every 1
        --eval-every 1 --lr 0.05 --groups 2 --stages 2 --micro-batches 2)

# Both runs give each stage one CPU thread: oneDNN's convolution backward-weights sums in an order that
# depends on the thread count (docs/cpu.md, Reproducibility), and a stage in one process gets its share
# of the process's threads (4 workers: 4 threads, 1 each) where a process has its own.
echo "== in one process"
BATON_NUM_THREADS=4 "$baton" "${common[@]}" --metrics "$dir/inproc.jsonl" >"$dir/inproc.out" 2>&1 ||
  { cat "$dir/inproc.out"; fail "the in-process run failed"; }

echo "== mpiexec -n 4"
BATON_NUM_THREADS=1 "${mpiexec[@]}" -n 4 "$baton" "${common[@]}" --metrics "$dir/mpi.jsonl" --checkpoint-dir "$dir/ckpt" \
  --trace "$dir/t.json" >"$dir/mpi.out" 2>&1
status=$?
cat "$dir/mpi.out"
[[ $status -eq 0 ]] || fail "the MPI run exited with status $status"
[[ $(grep -c '^across processes: 2 x 2 processes' "$dir/mpi.out") -eq 1 ]] || fail "rank 0 alone should print the layout once"
[[ $(grep -c '^done after 4 steps' "$dir/mpi.out") -eq 1 ]] || fail "rank 0 alone should print the summary once"
if [[ "$(losses "$dir/inproc.jsonl")" != "$(losses "$dir/mpi.jsonl")" ]]; then
  fail "the MPI run's losses differ from the in-process run's:"
  paste <(losses "$dir/inproc.jsonl") <(losses "$dir/mpi.jsonl") >&2
fi
[[ $(losses "$dir/mpi.jsonl" | wc -l) -eq 5 ]] || fail "expected 4 train lines and 1 eval line in the metrics"
[[ -d "$dir/ckpt/step-00000004" ]] || fail "no checkpoint of step 4"
for rank in 0 1 2 3; do  # each process's own timeline, its stage's all-reduces on their lane
  grep -q '"cat":"allreduce"' "$dir/t.rank$rank.json" 2>/dev/null || fail "t.rank$rank.json: missing, or no all-reduce in it"
done
grep -q '"name":"predicted"' "$dir/t.rank0.json" || fail "t.rank0.json lacks the predicted step"
cp -r "$dir/ckpt" "$dir/ckpt4"  # each resume below writes its own later checkpoints

echo "== a process count that does not match: an error on every rank"
"${mpiexec[@]}" -n 2 "$baton" "${common[@]}" >"$dir/mismatch.out" 2>&1 && fail "--groups 2 --stages 2 on 2 processes succeeded"
grep -q 'started 2 processes for --groups 2 --stages 2: .*(2 x 2 = 4)' "$dir/mismatch.out" ||
  { cat "$dir/mismatch.out"; fail "no rank named the mismatch"; }

echo "== the job's checkpoint resumes on one device"
resume=(--model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 6 --workers 1 --log-every 1 --eval-every 0
        --lr 0.05)
"$baton" train --resume "$dir/ckpt" "${resume[@]}" --device cpu --metrics "$dir/one.jsonl" >"$dir/resume.out" 2>&1 ||
  { cat "$dir/resume.out"; fail "resuming on one device failed"; }
grep -q 'at step 4' "$dir/resume.out" || { cat "$dir/resume.out"; fail "the run did not resume at step 4"; }

echo "== and as a pipeline across 2 processes"
"${mpiexec[@]}" -n 2 "$baton" train --resume "$dir/ckpt4" "${resume[@]}" --stages 2 --micro-batches 1 \
  --metrics "$dir/two.jsonl" >"$dir/resume2.out" 2>&1 || { cat "$dir/resume2.out"; fail "resuming on 2 processes failed"; }
grep -q 'at step 4' "$dir/resume2.out" || { cat "$dir/resume2.out"; fail "the 2-process run did not resume at step 4"; }
[[ $(grep -c '^done after 6 steps' "$dir/resume2.out") -eq 1 ]] || fail "the 2-process run should end at step 6, printed once"
# The same two steps from the same state, on one device and on two processes (BatchNorm over the
# whole batch of 8 either way: one micro-batch).
one=$(losses "$dir/one.jsonl" | tail -2 | cut -c1-13)
two=$(losses "$dir/two.jsonl" | tail -2 | cut -c1-13)
[[ "$one" == "$two" ]] || fail "the resumed losses differ: one device '$one', 2 processes '$two'"

echo "== a rank killed in the middle of the run"
kill_rank_mid_run 3 4 --groups 2 --stages 2 --micro-batches 2
[[ $failed -eq 0 ]] && echo "run_mpi_hybrid: passed"
exit $failed
