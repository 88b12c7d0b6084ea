#!/usr/bin/env bash
# `baton train --data-parallel 2` under mpiexec, end to end: the two processes log exactly the losses
# and evaluation of the in-process run with 2 replicas, rank 0 alone prints and writes, the job's
# checkpoint resumes on one device and with 4 processes, a BMUF run resumed from between two meetings
# logs exactly the uninterrupted run's losses (in one process and under mpiexec), a rank started with
# other settings is refused on every rank, and a rank killed mid-run ends the job quickly, naming it.
# Usage: run_mpi_train.sh <baton> <mpiexec> <its arguments...>
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"

common=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --log-every 1
        --eval-every 1 --lr 0.05 --data-parallel 2)

echo "== in-process, 2 replicas"
"$baton" "${common[@]}" --metrics "$dir/inproc.jsonl" >"$dir/inproc.out" 2>&1 || { cat "$dir/inproc.out"; fail "the in-process run failed"; }

echo "== mpiexec -n 2"
"${mpiexec[@]}" -n 2 "$baton" "${common[@]}" --metrics "$dir/mpi.jsonl" --checkpoint-dir "$dir/ckpt" \
  >"$dir/mpi.out" 2>&1
check_job_like_in_process $? 'data parallel: 2 replicas (one per process' "the setup line"
cp -r "$dir/ckpt" "$dir/ckpt4"  # each resume below writes its own later checkpoints

echo "== --data-parallel that differs from the process count: an error on every rank"
"${mpiexec[@]}" -n 2 "$baton" train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 1 \
  --data-parallel 4 >"$dir/mismatch.out" 2>&1 && fail "a job with --data-parallel 4 on 2 processes succeeded"
# Each rank checks before MPI starts; mpirun may end the second before it prints, so at least one line.
grep -q 'Open MPI started 2 processes: .* instead of --data-parallel 4' "$dir/mismatch.out" ||
  { cat "$dir/mismatch.out"; fail "no rank named the mismatch"; }

echo "== a rank started with another --lr: an error on every rank naming the setting"
"${mpiexec[@]}" -n 1 "$baton" train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 1 \
  --data-parallel 2 --lr 0.1 : -n 1 "$baton" train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 \
  --steps 1 --data-parallel 2 --lr 0.2 >"$dir/settings.out" 2>&1 && fail "a job whose ranks differ in --lr succeeded"
grep -q "the training configuration differs between ranks (rank 1 differs from rank 0): rank 1 has 'lr_schedule.base_lr = 0.2'" \
  "$dir/settings.out" || { cat "$dir/settings.out"; fail "no rank named the differing --lr"; }

# The same flags on both ranks but another model averaging: refused by the configuration check,
# before any averaging exchange (a bare MPI_ERR_TRUNCATE before).
echo "== a rank with another --model-averaging: an error on every rank naming it"
short=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 2 --workers 1 --data-parallel 2
       --eval-every 0 --average-every 2)
"${mpiexec[@]}" -n 1 "$baton" "${short[@]}" --model-averaging bmuf : -n 1 "$baton" "${short[@]}" \
  --model-averaging periodic >"$dir/averaging.out" 2>&1 && fail "a job whose ranks average differently succeeded"
grep -q "rank 1 has 'parallel.model_averaging = \"periodic\"' where rank 0 has 'parallel.model_averaging = \"bmuf\"'" \
  "$dir/averaging.out" || { cat "$dir/averaging.out"; fail "no rank named the differing --model-averaging"; }

echo "== only rank 0 resuming: an error on every rank naming --resume"
cp -r "$dir/ckpt" "$dir/ckpt-half"
"${mpiexec[@]}" -n 1 "$baton" "${common[@]}" --resume "$dir/ckpt-half" : -n 1 "$baton" "${common[@]}" \
  >"$dir/half.out" 2>&1 && fail "a job where one rank resumes succeeded"
grep -q "'resume = false' where rank 0 has 'resume = true'" "$dir/half.out" ||
  { cat "$dir/half.out"; fail "no rank named the rank that does not resume"; }

# Equal flags naming other contents: each rank runs in a directory of its own (mpiexec -wdir), where
# the same relative paths hold another dataset or another newest checkpoint.
for r in 0 1; do
  mkdir -p "$dir/wd$r"
  "$baton" make-dataset shapes --out "$dir/wd$r/data" --train 40 --test 8 --seed "$r" >/dev/null ||
    fail "make-dataset failed"
done
echo "== ranks reading other data under the same path: an error naming the data"
data=(train --model resnet20 --data cifar10:data --batch-size 8 --steps 1 --workers 1 --data-parallel 2 --eval-every 0)
"${mpiexec[@]}" -n 1 -wdir "$dir/wd0" "$baton" "${data[@]}" : -n 1 -wdir "$dir/wd1" "$baton" "${data[@]}" \
  >"$dir/data.out" 2>&1 && fail "a job whose ranks read other data succeeded"
grep -q "the training data differs between ranks (rank 1 differs from rank 0): rank 1 has 'train.first_samples = fnv1a" \
  "$dir/data.out" || { cat "$dir/data.out"; fail "no rank named the differing data"; }

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

# BMUF every 2 steps, checkpointed after every step: resumed from step 3 (the replicas apart since
# their meeting after step 2), steps 4 and 5 log the uninterrupted run's losses bit for bit.
averaging=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 5 --workers 1 --log-every 1
           --eval-every 0 --lr 0.05 --data-parallel 2 --model-averaging bmuf --average-every 2)
train_losses() { grep '"type":"train"' "$1" | grep -o '"loss":[^,}]*'; }
for launch in inproc mpi; do
  echo "== BMUF resumed between two meetings ($launch)"
  run=("$baton")
  [[ $launch == mpi ]] && run=("${mpiexec[@]}" -n 2 "$baton")
  "${run[@]}" "${averaging[@]}" --checkpoint-dir "$dir/avg-$launch" --checkpoint-every 1 --keep-checkpoints 5 \
    --metrics "$dir/avg-$launch.jsonl" >"$dir/avg-$launch.out" 2>&1 ||
    { cat "$dir/avg-$launch.out"; fail "the BMUF run failed"; continue; }
  mkdir -p "$dir/avg3-$launch" && cp -r "$dir/avg-$launch/step-00000003" "$dir/avg3-$launch/"
  "${run[@]}" "${averaging[@]}" --resume "$dir/avg3-$launch" --metrics "$dir/avg3-$launch.jsonl" \
    >"$dir/avg3-$launch.out" 2>&1 || { cat "$dir/avg3-$launch.out"; fail "resuming the BMUF run failed"; continue; }
  if [[ "$(train_losses "$dir/avg-$launch.jsonl" | tail -2)" != "$(train_losses "$dir/avg3-$launch.jsonl")" ]]; then
    fail "the resumed BMUF run ($launch) logged other losses than the uninterrupted one:"
    paste <(train_losses "$dir/avg-$launch.jsonl" | tail -2) <(train_losses "$dir/avg3-$launch.jsonl") >&2
  fi
done

# Two checkpoints of the BMUF run above, one per rank's directory.
echo "== ranks resuming other checkpoints under the same path: an error naming them"
mkdir -p "$dir/wd0/ck" "$dir/wd1/ck"
cp -r "$dir/avg-inproc/step-00000002" "$dir/wd0/ck/" && cp -r "$dir/avg-inproc/step-00000003" "$dir/wd1/ck/"
averaged=("${averaging[@]}" --resume ck)
"${mpiexec[@]}" -n 1 -wdir "$dir/wd0" "$baton" "${averaged[@]}" : -n 1 -wdir "$dir/wd1" "$baton" "${averaged[@]}" \
  >"$dir/resumed.out" 2>&1 && fail "a job whose ranks resume other checkpoints succeeded"
grep -q "the checkpoint resumed from differs between ranks (rank 1 differs from rank 0): rank 1 has 'step-00000003' where rank 0 has 'step-00000002'" \
  "$dir/resumed.out" || { cat "$dir/resumed.out"; fail "no rank named the differing checkpoints"; }
echo "== a fresh job into another run's checkpoint directory: refused on every rank, nothing deleted"
timeout 300 "${mpiexec[@]}" -n 2 "$baton" "${common[@]}" --checkpoint-dir "$dir/ckpt" >"$dir/fresh.out" 2>&1
status=$?
[[ $status -ne 0 && $status -ne 124 ]] || { cat "$dir/fresh.out"; fail "the fresh job into a used directory exited $status"; }
# Every rank refuses alike; mpirun may end the second before it prints, so at least one line.
grep -q "holds another run's checkpoints (the newest, $dir/ckpt/step-00000006)" "$dir/fresh.out" ||
  { cat "$dir/fresh.out"; fail "no rank refused the fresh job naming the newest checkpoint"; }
[[ -f "$dir/ckpt/step-00000006/model.safetensors" ]] || fail "the refused job deleted a checkpoint"

echo "== a rank killed mid-run"
kill_rank_mid_run 1 2 --data-parallel 2
[[ $failed -eq 0 ]] && echo "run_mpi_train: passed"
exit $failed
