#!/usr/bin/env bash
# `baton bench comm --backend nccl` on 2 GPUs (emulated ones in an EMU build): ends with status 0 and
# writes JSON holding the documented fields with every figure positive; on the emulated GPUs, a
# --max-bytes beyond their memory and more ranks than GPUs are refused with a message. Timings are
# never compared with a bound. Exits 77 (skipped) when a CUDA build runs on a machine with fewer than
# 2 GPUs; an EMU build never skips.
# Usage: run_nccl_bench.sh <baton> emu|cuda
set -uo pipefail

baton=$1
mode=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() {
  echo "run_nccl_bench: FAILED: $*" >&2
  failed=1
}
# count FILE FIELD: how many times "FIELD": <a number greater than 0> appears in FILE.
count_positive() { awk -v key="\"$2\":" '$1 == key { v = $2; sub(/,$/, "", v); if (v + 0 > 0) n++ } END { print n + 0 }' "$1"; }
has() { grep -q -- "$2" "$1" || fail "$1 lacks $2"; }

echo "== baton bench comm --backend nccl --ranks 2 --max-bytes 64K"
"$baton" bench comm --backend nccl --ranks 2 --max-bytes 64K --warmup 1 --repeats 2 --json "$dir/comm.json" \
  >"$dir/comm.out" 2>&1
status=$?
cat "$dir/comm.out"
if [[ $status -ne 0 && $mode == cuda ]] && grep -q -- '--backend nccl needs at least 2 GPUs' "$dir/comm.out"; then
  echo "run_nccl_bench: skipped: fewer than 2 GPUs"
  exit 77
fi
[[ $status -eq 0 ]] || fail "bench comm exited with status $status"
[[ $(grep -c '^all-reduce (sum, f32), 2 ranks as the GPUs cuda:0..1 of this process (nccl backend)' "$dir/comm.out") -eq 1 ]] ||
  fail "no header line"
if [[ -f "$dir/comm.json" ]]; then
  has "$dir/comm.json" '"benchmark": "comm"'
  has "$dir/comm.json" '"operation": "all_reduce"'
  has "$dir/comm.json" '"backend": "nccl"'
  has "$dir/comm.json" '"ranks": 2'
  has "$dir/comm.json" '"baseline": "ncclAllReduce"'
  has "$dir/comm.json" '"device": "cuda:0"'
  has "$dir/comm.json" '"nccl_version": "[0-9]'
  for field in bytes elements calls_per_sample time_us algbw_gbs busbw_gbs baseline_time_us baseline_algbw_gbs \
    baseline_busbw_gbs time_percent_of_baseline; do
    # 4 KiB .. 64 KiB: 5 sizes
    [[ $(count_positive "$dir/comm.json" "$field") -eq 5 ]] || fail "comm.json: expected 5 positive \"$field\""
  done
  grep -q '"max_time_percent_of_baseline_from_1mib": null' "$dir/comm.json" || fail "comm.json: no sizes from 1 MiB"
else
  fail "no comm.json"
fi

if [[ $mode == emu ]]; then  # the emulated devices have BATON_EMU_MEMORY each (4 GiB by default)
  echo "== baton bench comm --backend nccl --max-bytes 8G"
  "$baton" bench comm --backend nccl --ranks 2 --max-bytes 8G >"$dir/big.out" 2>&1
  status=$?
  cat "$dir/big.out"
  [[ $status -ne 0 ]] || fail "--max-bytes 8G on 4 GiB devices should be refused"
  grep -q -- '--max-bytes 8G needs a buffer of 8192 MiB on each GPU, more than half of the' "$dir/big.out" ||
    fail "no message refusing --max-bytes 8G"
  "$baton" bench comm --backend nccl --ranks 3 >"$dir/ranks.out" 2>&1 && fail "--ranks 3 on 2 devices should be refused"
  grep -q -- '--ranks 3 with --backend nccl: this process sees 2 GPUs' "$dir/ranks.out" || fail "no message refusing --ranks 3"
fi
[[ $failed -eq 0 ]] && echo "run_nccl_bench: passed"
exit $failed
