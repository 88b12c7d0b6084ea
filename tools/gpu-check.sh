#!/usr/bin/env bash
# On a machine with a GPU: CUDA build in build-gpu/ of the gpu suites and baton, every gpu-labelled
# test (a skipped one is a failure here, unless it needs more GPUs than the machine has), `baton
# devices`, the kernel benchmark, and a summary table; exits non-zero on any failure.
# Environment: BATON_CUDA_ARCHS (default 90), CMAKE_PREFIX_PATH, CUDNN_ROOT, NCCL_ROOT,
# DEVICE_CMAKE_ARGS (extra configure arguments, split on spaces), BUILD_DIR (default build-gpu), JOBS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build-gpu}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
baton=$build_dir/bin/baton
bench_json=$build_dir/bench-kernels.json
failures=()

say() { echo "==> $*"; }
fail() {
  echo "gpu-check: FAILED: $*" >&2
  failures+=("$*")
}

configure=(cmake -S . -B "$build_dir" -G Ninja -DBATON_CUDA=ON "-DBATON_CUDA_ARCHS=${BATON_CUDA_ARCHS:-90}")
# CMake reads CMAKE_PREFIX_PATH (':'-separated) from the environment itself; cached, later
# reconfigures by ninja see it too.
[[ -n ${CMAKE_PREFIX_PATH:-} ]] && configure+=("-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH//:/;}")
[[ -n ${CUDNN_ROOT:-} ]] && configure+=("-DCUDNN_ROOT=$CUDNN_ROOT")
[[ -n ${NCCL_ROOT:-} ]] && configure+=("-DNCCL_ROOT=$NCCL_ROOT")
if [[ -n ${DEVICE_CMAKE_ARGS:-} ]]; then
  read -r -a extra <<<"$DEVICE_CMAKE_ARGS"
  configure+=("${extra[@]}")
fi

say "${configure[*]}"
"${configure[@]}"
# Only what runs here: the gpu-labelled suites and the command line (the cpu suites are `make test`'s).
say "cmake --build $build_dir -j $jobs --target baton_gpu_tests baton_cli"
cmake --build "$build_dir" -j "$jobs" --target baton_gpu_tests baton_cli

# gpu tests; the per-test result lines of ctest's output are joined with each test's labels.
say "ctest -L gpu in $build_dir"
test_log=$build_dir/gpu-check-ctest.log
set +e
junit=$PWD/$build_dir/gpu-check-junit.xml  # every test's output, skipped ones included
rm -f "$junit"
(cd "$build_dir" && ctest -L gpu --output-on-failure --no-tests=error -j "$jobs" --output-junit "$junit") 2>&1 |
  tee "$test_log"
ctest_rc=${PIPESTATUS[0]}
set -e
if grep -q "No tests were found" "$test_log"; then
  fail "no gpu-labelled tests in $build_dir"
elif [[ $ctest_rc -ne 0 ]]; then
  fail "gpu tests (ctest exit code $ctest_rc)"
fi
labels_log=$build_dir/gpu-check-labels.log
(cd "$build_dir" && ctest -N -V -L gpu) >"$labels_log" 2>&1 || true
summary=$(awk '
  FNR == NR {  # ctest -N -V: "Labels: gpu slow" precedes "  Test  #12: name"
    if ($1 == "Labels:") { labels = $0; sub(/^Labels: */, "", labels) }
    else if ($1 == "Test" && $2 ~ /^#[0-9]+:$/) { n = substr($2, 2) + 0; test_labels[n] = labels; labels = "" }
    next
  }
  $2 == "Test" && $3 ~ /^#[0-9]+:$/ {  # "3/9 Test #12: name ....   Passed    0.01 sec"
    n = substr($3, 2) + 0
    status = /\*\*\*Skipped/ ? "skipped" : (/ Passed +[0-9.]+ sec/ ? "passed" : "failed")
    count[status]++
    split(test_labels[n], ls, " ")
    for (i in ls) { seen[ls[i]] = 1; by[ls[i], status]++ }
  }
  END {
    printf "%-8s %7s %7s %8s\n", "label", "passed", "failed", "skipped"
    for (l in seen) printf "%-8s %7d %7d %8d\n", l, by[l, "passed"], by[l, "failed"], by[l, "skipped"]
    printf "%-8s %7d %7d %8d\n", "all", count["passed"], count["failed"], count["skipped"]
  }' "$labels_log" "$test_log")

# Skipped tests with their reasons. A test that needs more GPUs than this machine has may skip (it
# says "needs two GPUs", "needs 4 CUDA devices", ...); any other skip on a GPU machine is a failure.
if command -v python3 >/dev/null 2>&1 && [[ -s $junit ]]; then
  skips=$(python3 - "$junit" <<'PY'
import re, sys, xml.etree.ElementTree as ET
more_gpus = re.compile(r"needs (two|\d+) (GPUs|CUDA devices)|fewer than \d+ GPUs")
unexpected = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if case.find("skipped") is None:
        continue
    out = (case.findtext("system-out") or "").splitlines()
    # GoogleTest: "file:line: Skipped" then the reason; the scripts: "...: skipped: reason".
    reason = next((out[i + 1] for i, l in enumerate(out[:-1]) if l.endswith(": Skipped")), None)
    reason = reason or next((l for l in out if "skipped:" in l), "no reason given")
    expected = bool(more_gpus.search(reason))
    unexpected += not expected
    print(f"  {'needs more GPUs' if expected else 'UNEXPECTED'}: {case.get('name')}: {reason.strip()}")
print(f"unexpected={unexpected}")
PY
  )
  echo "$skips" | grep -v '^unexpected=' || true
  [[ $(echo "$skips" | sed -n 's/^unexpected=//p') == 0 ]] ||
    fail "gpu tests were skipped on a GPU machine for a reason other than needing more GPUs (listed above)"
elif grep -q '\*\*\*Skipped' "$test_log"; then
  fail "gpu tests were skipped on a GPU machine (python3 is needed to read why from $junit)"
fi

say "$baton devices"
"$baton" devices || fail "baton devices"

say "$baton bench kernels --json $bench_json"
rm -f "$bench_json"
"$baton" bench kernels --json "$bench_json" || fail "baton bench kernels"

echo
echo "gpu tests"
echo "$summary"
if [[ -s $bench_json ]]; then
  echo
  echo "kernel benchmark ($bench_json)"
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$bench_json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
num = lambda v, f: format(v, f) if isinstance(v, (int, float)) else str(v)
print(f"device {d.get('device')}, copy {num(d.get('copy_gbps'), '.1f')} GB/s")
print(f"{'op':<32} {'bytes':>12} {'median ms':>10} {'GB/s':>9} {'% copy':>7}")
for r in d.get("results", []):
    print(f"{str(r.get('op')):<32} {num(r.get('bytes'), '.0f'):>12} {num(r.get('median_ms'), '.4f'):>10}"
          f" {num(r.get('gbps'), '.1f'):>9} {num(r.get('percent_of_copy'), '.1f'):>7}")
PY
  elif command -v jq >/dev/null 2>&1; then
    jq -r '"device \(.device), copy \(.copy_gbps) GB/s",
           (.results[] | "\(.op)\t\(.bytes) B\t\(.median_ms) ms\t\(.gbps) GB/s\t\(.percent_of_copy) % of copy")' "$bench_json"
  else
    echo "(python3 and jq not found; see the JSON file)"
  fi
fi

echo
if [[ ${#failures[@]} -gt 0 ]]; then
  echo "gpu-check: ${#failures[@]} failure(s):"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "gpu-check: passed"
