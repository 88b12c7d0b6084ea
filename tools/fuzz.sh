#!/usr/bin/env bash
# Builds the libFuzzer targets of baton's readers (clang, ASan + UBSan; tests/fuzz/) in build-fuzz/
# and runs each for SECONDS (default 600), starting from its committed corpus. Then the committed
# corpus and the new inputs are merged into a fresh folder, which keeps only inputs that reach code no
# kept input reaches, and that replaces tests/fuzz/corpus/<target>/. A crash stops with the input
# saved as build-fuzz/crash-*. SECONDS 0 only minimises the corpora. Usage: tools/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
((${#targets[@]} > 0)) || targets=(fuzz_train_config fuzz_model_spec fuzz_safetensors fuzz_cifar fuzz_planner_files)
build=${BUILD_DIR:-build-fuzz}
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_CUDA=OFF \
  -DBATON_MPI=OFF -DBATON_BUILD_TESTS=OFF -DBATON_WERROR=OFF -DBATON_FUZZ=ON >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
for target in "${targets[@]}"; do
  work="$build/corpus/$target"
  mkdir -p "$work"
  if ((seconds > 0)); then
    echo "== $target: ${seconds} s"
    (cd "$build" && "tests/fuzz/$target" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
      "corpus/$target" "../tests/fuzz/corpus/$target" 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+==ERROR|SUMMARY)" || true)
  fi
  kept="$build/corpus/$target.kept"
  rm -rf "$kept" && mkdir -p "$kept"
  "$build/tests/fuzz/$target" -merge=1 -max_len=65536 "$kept" "tests/fuzz/corpus/$target" "$work" >/dev/null 2>&1
  echo "   corpus: $(find "tests/fuzz/corpus/$target" -type f | wc -l) committed + $(find "$work" -type f | wc -l) new inputs, $(find "$kept" -type f | wc -l) kept"
  rm -rf "tests/fuzz/corpus/$target" && mv "$kept" "tests/fuzz/corpus/$target"
done
