#!/usr/bin/env bash
# A run that checkpoints every step, killed with SIGKILL at random moments 20 times and resumed with
# --resume after each kill, ends with bitwise the weights and optimiser state of the same run left
# alone (CPU): every restart continues from the newest complete checkpoint, whatever the kill
# interrupted (a step, a save, the start-up), and no leftover of an interrupted save remains.
# Usage: run_kill_resume.sh <baton>
set -u
baton=$1
# One compute thread per run, idle OpenMP threads asleep: the test's work stays bounded when the
# machine is shared (two spinning OpenMP programs on 2 cores slow each other many-fold). Both runs use
# the same count, so the bitwise comparison holds.
export BATON_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() {
  echo "run_kill_resume: FAILED: $*" >&2
  failed=1
}

steps=200
common=(train --model resnet20 --data synthetic:3x8x8:4:96 --batch-size 8 --workers 1 --device cpu --seed 3
  --eval-every 0 --log-every 1 --checkpoint-every 1 --keep-checkpoints 2 --steps "$steps")
final=$(printf 'step-%08d' "$steps")

"$baton" "${common[@]}" --checkpoint-dir "$dir/alone" >"$dir/alone.out" 2>&1 || fail "the undisturbed run failed: $(tail -1 "$dir/alone.out")"

kills=0
for attempt in $(seq 1 60); do
  "$baton" "${common[@]}" --resume "$dir/killed" >"$dir/attempt.out" 2>&1 &
  pid=$!
  if ((kills < 20)); then
    sleep "0.$((RANDOM % 4))$((RANDOM % 10))$((RANDOM % 10))"
    if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
    wait "$pid" 2>/dev/null
    [[ -d "$dir/killed/$final" ]] && break # finished before a kill came
  else
    wait "$pid" || fail "the last resumed run failed: $(tail -1 "$dir/attempt.out")"
    break
  fi
done
echo "run_kill_resume: $kills kills in $attempt starts"
((kills >= 20)) || echo "run_kill_resume: the run finished after $kills kills (fewer than 20: a fast machine)"
[[ -d "$dir/killed/$final" ]] || fail "no $final after the last resume"

# The tensors of two safetensors files: the bytes after the header (whose metadata names each run's
# own directory).
data_of() {
  local length
  length=$(od -An -t u8 -N8 "$1" | tr -d ' ')
  tail -c +$((8 + length + 1)) "$1"
}
for file in model.safetensors optimizer.safetensors; do
  (($(data_of "$dir/alone/$final/$file" | wc -c) > 0)) || fail "$file of $final holds no tensor data"
  if ! cmp -s <(data_of "$dir/alone/$final/$file") <(data_of "$dir/killed/$final/$file"); then
    fail "$file of $final differs from the undisturbed run's"
  fi
done
leftovers=$(find "$dir/killed" -maxdepth 1 -name '.step-*.tmp-*' | wc -l)
((leftovers == 0)) || fail "$leftovers temporary directories of interrupted saves were left behind"
exit $failed
