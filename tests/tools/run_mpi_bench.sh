#!/usr/bin/env bash
# `baton bench comm --backend mpi`, `baton bench dp` and `baton bench hybrid` under mpiexec -n 2: each ends with status 0, rank 0
# alone prints the table and writes the JSON, which holds the documented fields with every figure
# positive. Timings are never compared with a bound.
# Usage: run_mpi_bench.sh <baton> <mpiexec> <its arguments...>
set -uo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/e2e_script_common.sh"
# count FILE FIELD: how many times "FIELD": <a number greater than 0> appears in FILE.
count_positive() { awk -v key="\"$2\":" '$1 == key { v = $2; sub(/,$/, "", v); if (v + 0 > 0) n++ } END { print n + 0 }' "$1"; }
has() { grep -q -- "$2" "$1" || fail "$1 lacks $2"; }
# run_bench_job NAME PATTERN WHAT ARGUMENTS...: `mpiexec -n 2 baton bench NAME ARGUMENTS --json
# $dir/NAME.json` (its output in $dir/NAME.out) ends with status 0 and rank 0 alone does WHAT (prints
# one line matching PATTERN); true when it wrote $dir/NAME.json, a failure otherwise.
run_bench_job() {
  local name=$1 pattern=$2 what=$3
  shift 3
  "${mpiexec[@]}" -n 2 "$baton" bench "$name" "$@" --json "$dir/$name.json" >"$dir/$name.out" 2>&1
  local status=$?
  cat "$dir/$name.out"
  [[ $status -eq 0 ]] || fail "bench $name exited with status $status"
  [[ $(grep -c "$pattern" "$dir/$name.out") -eq 1 ]] || fail "rank 0 alone should $what"
  [[ -f "$dir/$name.json" ]] || { fail "no $name.json"; return 1; }
}

echo "== mpiexec -n 2 baton bench comm --backend mpi --max-bytes 1M"
if run_bench_job comm '^all-reduce (sum, f32), 2 processes (mpi backend' "print the header once" --backend mpi \
  --max-bytes 1M --warmup 1 --repeats 3; then
  [[ $(grep -c '^wrote ' "$dir/comm.out") -eq 1 ]] || fail "rank 0 alone should write the JSON"
  has "$dir/comm.json" '"backend": "mpi"'
  has "$dir/comm.json" '"ranks": 2'
  has "$dir/comm.json" '"baseline": "MPI_Allreduce"'
  has "$dir/comm.json" '"mpi_reduction": "native"'
  for field in bytes time_us algbw_gbs busbw_gbs baseline_time_us baseline_algbw_gbs baseline_busbw_gbs \
    time_percent_of_baseline; do
    # 4 KiB .. 1 MiB: 9 sizes
    [[ $(count_positive "$dir/comm.json" "$field") -eq 9 ]] || fail "comm.json: expected 9 positive \"$field\""
  done
  [[ $(count_positive "$dir/comm.json" max_time_percent_of_baseline_from_1mib) -eq 1 ]] || fail "comm.json: no summary from 1 MiB"
fi

echo "== mpiexec -n 2 baton bench dp"
if run_bench_job dp '^scaling efficiency:' "print the scaling line once" --batch-size 4 --steps 2 --warmup 1; then
  has "$dir/dp.json" '"mode": "processes"'
  has "$dir/dp.json" '"replicas": 2'
  has "$dir/dp.json" '"available": true'
  [[ $(count_positive "$dir/dp.json" samples_per_s) -eq 2 ]] || fail "dp.json: expected 2 positive samples_per_s"
  for field in scaling_efficiency allreduce_ms core_bound_step_ms measured_over_predicted; do
    [[ $(count_positive "$dir/dp.json" "$field") -eq 1 ]] || fail "dp.json: expected a positive \"$field\""
  done
fi
echo "== mpiexec -n 2 baton bench hybrid (every G x S = 2: 1x2, 2x1 under both strategies)"
if run_bench_job hybrid '^wrote ' "write the JSON" --batch-size 8 --steps 2 --warmup 1; then
  has "$dir/hybrid.json" '"mode": "processes"'
  has "$dir/hybrid.json" '"processes": 2'
  [[ $(count_positive "$dir/hybrid.json" samples_per_s) -eq 3 ]] || fail "hybrid.json: expected 3 positive samples_per_s"
  # 2x1: bucket and partition all-reduce the same bytes; partition in exactly one message per stage.
  [[ $(count_positive "$dir/hybrid.json" allreduce_bytes_per_step) -eq 2 ]] || fail "hybrid.json: expected 2 rows with all-reduce bytes"
  # A run's keys are sorted: its message count comes before its grad_sync.
  partition_messages=$(awk '$1 == "\"allreduce_messages_per_step\":" { m = $2; sub(/,$/, "", m) }
    $1 == "\"grad_sync\":" && $2 ~ /partition/ { print m + 0 }' "$dir/hybrid.json")
  [[ "$partition_messages" == "1" ]] || fail "hybrid.json: partition sent '$partition_messages' all-reduces per step, expected 1"
fi
[[ $failed -eq 0 ]] && echo "run_mpi_bench: passed"
exit $failed
