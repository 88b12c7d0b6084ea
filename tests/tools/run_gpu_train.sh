#!/usr/bin/env bash
# `baton train --data-parallel 2` on two GPUs (NCCL), end to end: the run logs the losses and the
# evaluation of the same run on two virtual CPU devices (within 1e-4: GPU kernels round differently),
# reports its two replicas on cuda:0 and cuda:1, and its checkpoint resumes on one GPU. Exits 77
# (skipped) on a machine with fewer than two GPUs.
# Usage: run_gpu_train.sh <baton>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"

gpus=$("$baton" devices 2>/dev/null | grep -c '^GPU ')
if [[ $gpus -lt 2 ]]; then
  echo "run_gpu_train: skipped: needs two GPUs, this machine has $gpus"
  exit 77
fi
losses() { grep -o '"loss":[^,}]*' "$1" | cut -d: -f2; }

common=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 3 --workers 1 --log-every 1
        --eval-every 3 --lr 0.05 --data-parallel 2)

echo "== 2 replicas on cuda:0, cuda:1"
"$baton" "${common[@]}" --device cuda --metrics "$dir/gpu.jsonl" --checkpoint-dir "$dir/ckpt" >"$dir/gpu.out" 2>&1
status=$?
cat "$dir/gpu.out"
[[ $status -eq 0 ]] || fail "the GPU run exited with status $status"
grep -q 'data parallel: 2 replicas in this process on cuda:0,cuda:1' "$dir/gpu.out" || fail "the replicas are not on cuda:0,cuda:1"

echo "== 2 replicas on cpu:0, cpu:1"
"$baton" "${common[@]}" --device cpu --metrics "$dir/cpu.jsonl" >"$dir/cpu.out" 2>&1 || { cat "$dir/cpu.out"; fail "the CPU run failed"; }

paste <(losses "$dir/gpu.jsonl") <(losses "$dir/cpu.jsonl") >"$dir/pairs"
[[ $(wc -l <"$dir/pairs") -eq 4 ]] || fail "expected 3 train losses and 1 evaluation loss in each run's metrics"
if ! awk '{ d = $1 - $2; if (d < 0) d = -d; s = $2 < 0 ? -$2 : $2; if (d > 1e-4 * s + 1e-6) exit 1 }' "$dir/pairs"; then
  fail "the GPU run's losses differ from the CPU run's:"
  cat "$dir/pairs" >&2
fi

echo "== resume the checkpoint on cuda:1"
"$baton" train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --lr 0.05 \
  --resume "$dir/ckpt" --device cuda:1 >"$dir/resume.out" 2>&1
status=$?
cat "$dir/resume.out"
[[ $status -eq 0 ]] || fail "resuming on one GPU exited with status $status"
grep -q '^done after 4 steps' "$dir/resume.out" || fail "the resumed run did not reach step 4"

exit $failed
