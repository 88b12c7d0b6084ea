#!/usr/bin/env bash
# Model averaging inside the hybrid across processes: `mpiexec -n 4 baton train --groups 2 --stages 2
# --model-averaging bmuf` logs exactly the losses and evaluation of the same run in one process, a
# checkpoint the run in one process wrote (with its averaging state) resumes under mpiexec -n 4 with
# the uninterrupted run's losses and writes its own averaging state, and averaging with one group is
# refused.
# Usage: run_mpi_hybrid_averaging.sh <baton> <mpiexec> <its arguments...>
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"

common=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --workers 1 --log-every 1
        --eval-every 1 --lr 0.05 --groups 2 --stages 2 --micro-batches 2 --partitioner uniform --model-averaging bmuf
        --average-every 2)

# Each stage gets one CPU thread either way (run_mpi_hybrid.sh says why); the uniform partitioner splits
# the model the same way whatever the measured profile says (the resumed run must have the same stages).
echo "== bmuf in one process"
BATON_NUM_THREADS=4 "$baton" "${common[@]}" --steps 4 --metrics "$dir/inproc.jsonl" --checkpoint-dir "$dir/ckpt" \
  --checkpoint-every 2 >"$dir/inproc.out" 2>&1 || { cat "$dir/inproc.out"; fail "the in-process run failed"; }
[[ -f "$dir/ckpt/step-00000002/averaging.safetensors" ]] || fail "the checkpoint of step 2 holds no averaging state"

echo "== bmuf under mpiexec -n 4"
BATON_NUM_THREADS=1 "${mpiexec[@]}" -n 4 "$baton" "${common[@]}" --steps 4 --metrics "$dir/mpi.jsonl" >"$dir/mpi.out" 2>&1
status=$?
cat "$dir/mpi.out"
[[ $status -eq 0 ]] || fail "the MPI run exited with status $status"
[[ $(losses "$dir/mpi.jsonl" | wc -l) -eq 5 ]] || fail "expected 4 train lines and 1 eval line in the metrics"
if [[ "$(losses "$dir/inproc.jsonl")" != "$(losses "$dir/mpi.jsonl")" ]]; then
  fail "the MPI run's losses differ from the in-process run's:"
  paste <(losses "$dir/inproc.jsonl") <(losses "$dir/mpi.jsonl") >&2
fi

echo "== the in-process checkpoint of step 2 resumes under mpiexec -n 4"
mkdir -p "$dir/ckpt2" && cp -r "$dir/ckpt/step-00000002" "$dir/ckpt2/"
BATON_NUM_THREADS=1 "${mpiexec[@]}" -n 4 "$baton" train --resume "$dir/ckpt2" "${common[@]:1}" \
  --steps 4 --metrics "$dir/resumed.jsonl" >"$dir/resumed.out" 2>&1 || { cat "$dir/resumed.out"; fail "resuming under MPI failed"; }
grep -q 'at step 2' "$dir/resumed.out" || { cat "$dir/resumed.out"; fail "the run did not resume at step 2"; }
expected=$(grep '"type":"train"' "$dir/inproc.jsonl" | tail -2 | grep -o '"loss":[^,}]*')
resumed=$(grep '"type":"train"' "$dir/resumed.jsonl" | grep -o '"loss":[^,}]*')
[[ "$expected" == "$resumed" ]] || fail "the resumed losses '$resumed' differ from the uninterrupted run's '$expected'"
[[ -f "$dir/ckpt2/step-00000004/averaging.safetensors" ]] || fail "the MPI run's checkpoint holds no averaging state"

echo "== the MPI run's checkpoint of step 4 goes on in one process as the in-process run's does"
for from in ckpt ckpt2; do
  mkdir -p "$dir/from-$from" && cp -r "$dir/$from/step-00000004" "$dir/from-$from/"
  BATON_NUM_THREADS=4 "$baton" train --resume "$dir/from-$from" "${common[@]:1}" --steps 6 \
    --metrics "$dir/from-$from.jsonl" >"$dir/from-$from.out" 2>&1 || { cat "$dir/from-$from.out"; fail "resuming $from failed"; }
done
[[ $(losses "$dir/from-ckpt.jsonl" | wc -l) -ge 2 ]] || fail "the run resumed from the in-process checkpoint logged no steps"
[[ "$(losses "$dir/from-ckpt.jsonl")" == "$(losses "$dir/from-ckpt2.jsonl")" ]] ||
  fail "resumed from the MPI run's checkpoint, the losses differ from those resumed from the in-process one"

echo "== averaging with one group: refused"
"$baton" train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 1 --workers 1 --stages 2 \
  --model-averaging bmuf >"$dir/one.out" 2>&1 && fail "--model-averaging with a pipeline of one group succeeded"
grep -q 'need --data-parallel N or --groups G' "$dir/one.out" || { cat "$dir/one.out"; fail "no error named --groups"; }

[[ $failed -eq 0 ]] && echo "run_mpi_hybrid_averaging: passed"
exit $failed
