#!/usr/bin/env bash
# The hybrid across processes end to end: `mpiexec -n 4 baton train --groups 2 --stages 2` logs exactly
# the losses and evaluation of the same run in one process, rank 0 alone prints and writes (each
# process its own --trace file), its
# checkpoint resumes on one device, as a plain pipeline across 2 processes and (--resume alone) as the
# stored hybrid across 4 processes with the losses of its resume in one process, a process count that
# does not match is refused, PipeDream's 3-1 (a process per stage replica) logs the losses of the same
# plan in one process and its checkpoint resumes on one device, a plan file (`baton train --plan`) logs
# the losses of the same layout in one process and refuses another process count, and a rank killed in
# the middle of a step ends the job quickly, naming it.
# Usage: run_mpi_hybrid.sh <baton> <mpiexec> <its arguments...>
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"

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
check_job_like_in_process $? '^across processes: 2 x 2 processes' "the layout"
for rank in 0 1 2 3; do  # each process's own timeline, its stage's all-reduces on their lane
  grep -q '"cat":"allreduce"' "$dir/t.rank$rank.json" 2>/dev/null || fail "t.rank$rank.json: missing, or no all-reduce in it"
done
grep -q '"name":"predicted"' "$dir/t.rank0.json" || fail "t.rank0.json lacks the predicted step"
for copy in ckpt4 ckpt-mpi ckpt-inproc; do cp -r "$dir/ckpt" "$dir/$copy"; done  # each resume below writes its own

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

echo "== --resume alone: the checkpoint's hybrid, across 4 processes and in one"
BATON_NUM_THREADS=1 "${mpiexec[@]}" -n 4 "$baton" train --resume "$dir/ckpt-mpi" --steps 6 --metrics "$dir/bare-mpi.jsonl" \
  >"$dir/bare-mpi.out" 2>&1 || { cat "$dir/bare-mpi.out"; fail "resuming the stored hybrid on 4 processes failed"; }
[[ $(grep -c '^resuming as the hybrid of 2 groups x 2 stages' "$dir/bare-mpi.out") -eq 1 ]] &&
  [[ $(grep -c '^across processes: 2 x 2 processes' "$dir/bare-mpi.out") -eq 1 ]] ||
  { cat "$dir/bare-mpi.out"; fail "rank 0 should say once that it resumes as the stored hybrid across processes"; }
BATON_NUM_THREADS=4 "$baton" train --resume "$dir/ckpt-inproc" --steps 6 --metrics "$dir/bare-inproc.jsonl" \
  >"$dir/bare-inproc.out" 2>&1 || { cat "$dir/bare-inproc.out"; fail "resuming the stored hybrid in one process failed"; }
if [[ "$(losses "$dir/bare-inproc.jsonl")" != "$(losses "$dir/bare-mpi.jsonl")" ]]; then
  fail "the stored hybrid resumed with other losses across processes than in one:"
  paste <(losses "$dir/bare-inproc.jsonl") <(losses "$dir/bare-mpi.jsonl") >&2
fi

echo "== unequal replicas across processes: a process per stage replica"
# Heavy convolutions before a fully connected layer with most of the parameters: the antichain
# partitioner replicates the convolutions 3 times and leaves the layer alone (3-1 on 4 devices). The
# layer is wide enough (16384 -> 512) that its stage takes about a third of the convolutions' time:
# with 256 outputs 2-2 was as fast, and the measured profiles chose either.
cat >"$dir/convfc.json" <<'SPEC'
{"format": "baton.graph/1", "outputs": ["loss", "fc2"],
 "inputs": [{"dtype": "f32", "name": "x", "shape": [1, 3, 32, 32]}, {"dtype": "i64", "name": "labels", "shape": [1]}],
 "layers": [
  {"inputs": ["x"], "name": "conv1", "type": "Conv2d", "params": {"in_channels": 3, "out_channels": 64, "kernel_size": [3, 3], "padding": [1, 1], "stride": [1, 1], "dilation": [1, 1], "groups": 1, "bias": true, "bias_init": {"constant": 0.0}, "weight_init": {"normal": [0.0, 0.1]}}},
  {"inputs": ["conv1"], "name": "relu1", "type": "ReLU", "params": {}},
  {"inputs": ["relu1"], "name": "conv2", "type": "Conv2d", "params": {"in_channels": 64, "out_channels": 64, "kernel_size": [3, 3], "padding": [1, 1], "stride": [1, 1], "dilation": [1, 1], "groups": 1, "bias": true, "bias_init": {"constant": 0.0}, "weight_init": {"normal": [0.0, 0.05]}}},
  {"inputs": ["conv2"], "name": "relu2", "type": "ReLU", "params": {}},
  {"inputs": ["relu2"], "name": "conv3", "type": "Conv2d", "params": {"in_channels": 64, "out_channels": 64, "kernel_size": [3, 3], "padding": [1, 1], "stride": [1, 1], "dilation": [1, 1], "groups": 1, "bias": true, "bias_init": {"constant": 0.0}, "weight_init": {"normal": [0.0, 0.05]}}},
  {"inputs": ["conv3"], "name": "relu3", "type": "ReLU", "params": {}},
  {"inputs": ["relu3"], "name": "pool", "type": "MaxPool2d", "params": {"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1], "ceil_mode": false}},
  {"inputs": ["pool"], "name": "flatten", "type": "Flatten", "params": {"start_dim": 1, "end_dim": -1}},
  {"inputs": ["flatten"], "name": "fc1", "type": "Linear", "params": {"in_features": 16384, "out_features": 512, "bias": true, "bias_init": {"constant": 0.0}, "weight_init": {"normal": [0.0, 0.005]}}},
  {"inputs": ["fc1"], "name": "relu4", "type": "ReLU", "params": {}},
  {"inputs": ["relu4"], "name": "fc2", "type": "Linear", "params": {"in_features": 512, "out_features": 4, "bias": true, "bias_init": {"constant": 0.0}, "weight_init": {"normal": [0.0, 0.05]}}},
  {"inputs": ["fc2", "labels"], "name": "loss", "type": "SoftmaxCrossEntropy", "params": {"label_smoothing": 0.0}}]}
SPEC
free=(train --model-spec "$dir/convfc.json" --data synthetic:3x32x32:4:240 --batch-size 48 --steps 4 --workers 1
      --log-every 1 --eval-every 2 --lr 0.01 --groups 2 --stages 2 --micro-batches 3 --replication free
      --partitioner antichain)
BATON_NUM_THREADS=4 "$baton" "${free[@]}" --metrics "$dir/free-inproc.jsonl" >"$dir/free-inproc.out" 2>&1 ||
  { cat "$dir/free-inproc.out"; fail "the in-process free-replication run failed"; }
BATON_NUM_THREADS=1 "${mpiexec[@]}" -n 4 "$baton" "${free[@]}" --metrics "$dir/free-mpi.jsonl" \
  --checkpoint-dir "$dir/free-ckpt" >"$dir/free-mpi.out" 2>&1 || { cat "$dir/free-mpi.out"; fail "the free-replication MPI run failed"; }
cat "$dir/free-mpi.out"
for out in free-inproc free-mpi; do
  grep -q '^pipeline: antichain+replication 3-1 ' "$dir/$out.out" ||
    fail "$out: the partitioner did not choose 3-1: $(grep '^pipeline:' "$dir/$out.out")"
done
[[ $(grep -c '^across processes: 4 processes (MPI), world rank u runs stage replica u' "$dir/free-mpi.out") -eq 1 ]] ||
  fail "rank 0 alone should print the replicas' layout once"
if [[ "$(losses "$dir/free-inproc.jsonl")" != "$(losses "$dir/free-mpi.jsonl")" ]]; then
  fail "the free-replication MPI run's losses differ from the in-process run's:"
  paste <(losses "$dir/free-inproc.jsonl") <(losses "$dir/free-mpi.jsonl") >&2
fi
"$baton" train --resume "$dir/free-ckpt" --model-spec "$dir/convfc.json" --data synthetic:3x32x32:4:240 --batch-size 48 \
  --steps 5 --workers 1 --eval-every 0 --lr 0.01 --device cpu >"$dir/free-resume.out" 2>&1 ||
  { cat "$dir/free-resume.out"; fail "the replicas' checkpoint did not resume on one device"; }
grep -q 'at step 4' "$dir/free-resume.out" || { cat "$dir/free-resume.out"; fail "the replicas' checkpoint did not resume at step 4"; }

echo "== a plan file across processes: the losses of the same layout in one process"
"$baton" plan --model resnet20 --input 3x8x8 --classes 4 --cluster cpu-4 --batch 8 --stages 2 --groups 2 \
  --micro-batches 2 --json "$dir/plan.json" >"$dir/plan.out" 2>&1 || { cat "$dir/plan.out"; fail "baton plan failed"; }
by_plan=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --log-every 1
         --eval-every 1 --lr 0.05 --plan "$dir/plan.json")
BATON_NUM_THREADS=1 "${mpiexec[@]}" -n 4 "$baton" "${by_plan[@]}" --metrics "$dir/plan-mpi.jsonl" >"$dir/plan-mpi.out" 2>&1 ||
  { cat "$dir/plan-mpi.out"; fail "the plan file's MPI run failed"; }
[[ $(grep -c "^pipeline: plan from $dir/plan.json" "$dir/plan-mpi.out") -eq 1 ]] || fail "rank 0 should say the plan's file once"
if [[ "$(losses "$dir/inproc.jsonl")" != "$(losses "$dir/plan-mpi.jsonl")" ]]; then
  fail "the plan file's MPI run's losses differ from the in-process run's:"
  paste <(losses "$dir/inproc.jsonl") <(losses "$dir/plan-mpi.jsonl") >&2
fi
"${mpiexec[@]}" -n 2 "$baton" "${by_plan[@]}" >"$dir/plan-mismatch.out" 2>&1 && fail "a 4-replica plan on 2 processes succeeded"
grep -q "started 2 processes for the plan in $dir/plan.json, which runs 4 stage replicas" "$dir/plan-mismatch.out" ||
  { cat "$dir/plan-mismatch.out"; fail "no rank named the plan's process count"; }

echo "== a rank killed in the middle of the run"
kill_rank_mid_run 3 4 --groups 2 --stages 2 --micro-batches 2
[[ $failed -eq 0 ]] && echo "run_mpi_hybrid: passed"
exit $failed
