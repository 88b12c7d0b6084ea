#!/usr/bin/env bash
# Records the per-step losses of baton's training modes (single device, pipeline, data parallel,
# hybrid with bucket and partition synchronisation, free replication, model averaging, and the same
# under mpirun) on one small fixed workload, or compares them with an earlier record: a structural
# change must leave every number where it was.
# Usage: tools/record_losses.sh BATON OUT.txt [--compare EARLIER.txt] [--tolerance 1e-6]
#   Each line of OUT.txt is "<mode> <step> <loss>" with the loss as written in the metrics file.
#   With --compare, every mode and step of EARLIER.txt must be in OUT.txt with a loss within the
#   relative tolerance (default 0: bit for bit); the differences are printed and the exit code is 1.
set -uo pipefail

baton=${1:?usage: record_losses.sh BATON OUT.txt [--compare EARLIER.txt] [--tolerance T]}
out=${2:?usage: record_losses.sh BATON OUT.txt [--compare EARLIER.txt] [--tolerance T]}
shift 2
earlier=""
tolerance=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --compare) earlier=${2:?--compare needs a file}; shift 2 ;;
    --tolerance) tolerance=${2:?--tolerance needs a number}; shift 2 ;;
    *) echo "record_losses.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
mpiexec=$(command -v mpiexec || true)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/all.txt"

# One CPU thread per stage or replica: oneDNN's reductions depend on the thread count (docs/cpu.md).
common=(train --model resnet20 --data synthetic:3x8x8:4:64 --batch-size 8 --steps 4 --workers 1 --log-every 1
        --eval-every 0 --lr 0.05 --seed 3)

# run MODE THREADS [LAUNCHER...] -- FLAGS...: one run, its train losses appended under MODE.
run() {
  local mode=$1 threads=$2
  shift 2
  local launcher=()
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  shift
  if ! BATON_NUM_THREADS=$threads "${launcher[@]}" "$baton" "${common[@]}" "$@" --metrics "$work/$mode.jsonl" \
    >"$work/$mode.out" 2>&1; then
    echo "record_losses.sh: mode $mode failed:" >&2
    tail -5 "$work/$mode.out" >&2
    return 1
  fi
  python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "train": print(sys.argv[2], r["step"], repr(r["loss"]))' "$work/$mode.jsonl" "$mode" >>"$work/all.txt"
}

status=0
run single 1 -- --device cpu || status=1
run pipeline 2 -- --stages 2 --micro-batches 2 || status=1
run data-parallel 2 -- --data-parallel 2 || status=1
run hybrid-bucket 4 -- --groups 2 --stages 2 --micro-batches 2 || status=1
run hybrid-partition 4 -- --groups 2 --stages 2 --micro-batches 2 --grad-sync partition || status=1
run free-replication 4 -- --groups 2 --stages 2 --micro-batches 2 --replication free --partitioner antichain || status=1
for variant in periodic bmuf easgd post-local; do
  extra=()
  [[ $variant == post-local ]] && extra=(--local-after 2)
  run "averaging-$variant" 2 -- --data-parallel 2 --model-averaging "$variant" --average-every 2 "${extra[@]}" ||
    status=1
done
if [[ -n $mpiexec ]]; then
  mpi=("$mpiexec" --oversubscribe --allow-run-as-root)
  run mpi-data-parallel 1 "${mpi[@]}" -n 2 -- --data-parallel 2 || status=1
  run mpi-hybrid 1 "${mpi[@]}" -n 4 -- --groups 2 --stages 2 --micro-batches 2 || status=1
  run mpi-averaging-bmuf 1 "${mpi[@]}" -n 2 -- --data-parallel 2 --model-averaging bmuf --average-every 2 || status=1
else
  echo "record_losses.sh: no mpiexec on PATH: the mpi modes are not recorded" >&2
fi
cp "$work/all.txt" "$out"
echo "record_losses.sh: $(wc -l <"$out") losses in $out"

if [[ -n $earlier ]]; then
  if ! awk -v tol="$tolerance" '
      function abs(x) { return x < 0 ? -x : x }
      NR == FNR { now[$1 " " $2] = $3; next }
      {
        key = $1 " " $2
        if (!(key in now)) { print "missing: " key; bad = 1; next }
        a = $3 + 0; b = now[key] + 0
        if ($3 != now[key] && abs(a - b) > tol * abs(a)) { print "differs: " key ": " $3 " then, " now[key] " now"; bad = 1 }
      }
      END { exit bad }' "$out" "$earlier"; then
    echo "record_losses.sh: losses differ from $earlier" >&2
    status=1
  else
    echo "record_losses.sh: every loss of $earlier is unchanged (relative tolerance $tolerance)"
  fi
fi
exit $status
