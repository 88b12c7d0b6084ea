#!/usr/bin/env bash
# Package test: installs a baton build into a temporary prefix, checks the installed files and the
# `baton` binary's RPATH, then configures, builds and runs the out-of-tree project in consumer/
# (find_package(baton), baton::baton) with every installed header compiled on its own, and runs its
# programs: a tensor check, pipelined training, and weights -> forward -> backward -> step. In a CUDA
# build of shared libraries, the consumer is also configured and built with the CUDA toolkit hidden.
# Usage: run_package_test.sh <build-dir> [cmake] [generator] [c++ compiler] [config]
set -euo pipefail

build_dir=$1
cmake=${2:-cmake}
generator=${3:-Ninja}
cxx=${4:-}
config=${5:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

# Runs a command, keeping its output for when it fails.
step() {
  echo "package-test: $*"
  if ! "$@" >"$work/step.log" 2>&1; then
    cat "$work/step.log"
    echo "package-test: FAILED: $*" >&2
    exit 1
  fi
}
check() {
  local what=$1
  shift
  if ! "$@"; then
    echo "package-test: FAILED: $what" >&2
    exit 1
  fi
}

step "$cmake" --install "$build_dir" --prefix "$prefix" ${config:+--config "$config"}

include_dir=$prefix/include/baton
check "runtime/core/tensor.h installed" test -f "$include_dir/runtime/core/tensor.h"
check "the generated runtime/core/build_config.h installed" test -f "$include_dir/runtime/core/build_config.h"
check "batonConfig.cmake installed" test -n "$(find "$prefix" -name batonConfig.cmake)"
check "no nvcc-only .cuh header installed" test -z "$(find "$include_dir" -name '*.cuh')"
if grep -q '^#define BATON_HAVE_CUDA 0' "$include_dir/runtime/core/build_config.h"; then
  check "no CUDA header installed in a CPU-only build" test -z "$(find "$include_dir" -path '*/cuda/*')"
fi

# The installed CLI finds its libraries through its RPATH alone.
step env -u LD_LIBRARY_PATH "$prefix/bin/baton" --version
step env -u LD_LIBRARY_PATH "$prefix/bin/baton" devices

consumer_build=$work/consumer-build
step "$cmake" -S "$here/consumer" -B "$consumer_build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DBATON_CHECK_HEADERS=ON ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"}
found_dir=$(sed -n 's/^baton_DIR:PATH=//p' "$consumer_build/CMakeCache.txt")
check "baton found in the temporary prefix (found in '$found_dir')" test "${found_dir#"$prefix"/}" != "$found_dir"
sed -n 's/^-- checking/package-test: checking/p' "$work/step.log"
step "$cmake" --build "$consumer_build"

echo "package-test: $consumer_build/baton_consumer"
env -u LD_LIBRARY_PATH "$consumer_build/baton_consumer" | tee "$work/consumer.log"
check "consumer printed ok" grep -q '^consumer: ok$' "$work/consumer.log"

echo "package-test: $consumer_build/baton_pipeline_example"
env -u LD_LIBRARY_PATH "$consumer_build/baton_pipeline_example" | tee "$work/pipeline_example.log"
check "pipeline example printed its loss" grep -Eq '^pipeline-example: 4 steps, loss [0-9]+\.[0-9]+$' "$work/pipeline_example.log"
check "pipeline example printed ok" grep -q '^pipeline-example: ok$' "$work/pipeline_example.log"
echo "package-test: $consumer_build/baton_weights_example"
env -u LD_LIBRARY_PATH "$consumer_build/baton_weights_example" "$work/weights.safetensors" | tee "$work/weights_example.log"
check "weights example wrote its weights file" test -s "$work/weights.safetensors"
check "weights example printed its loss" grep -Eq '^weights-example: resnet20 from .*, loss [0-9]+\.[0-9]+$' "$work/weights_example.log"
check "weights example printed ok" grep -q '^weights-example: ok$' "$work/weights_example.log"
# A CPU-only consumer of a CUDA build (shared libraries): plain find_package(baton) must configure,
# build and run with the CUDA toolkit out of sight — no nvcc on PATH, the toolkit's prefixes ignored,
# CUDAToolkit_ROOT / CUDA_PATH unset, and find_package(CUDAToolkit) disabled, so that any attempt
# to find the toolkit fails the configure. The libraries find the CUDA runtime through their RUNPATH.
if grep -q '^#define BATON_HAVE_CUDA 1' "$include_dir/runtime/core/build_config.h" &&
  test -n "$(find "$prefix" -name 'libbaton_core.so*')"; then
  nvcc_path=$(command -v nvcc || true)
  hidden="/usr/local/cuda${nvcc_path:+;$(dirname "$(dirname "$nvcc_path")")}"
  path_without_nvcc=$(echo "$PATH" | tr ':' '\n' | while read -r d; do test -x "$d/nvcc" || echo "$d"; done | paste -sd:)
  cpu_consumer_build=$work/cpu-consumer-build
  step env -u CUDAToolkit_ROOT -u CUDA_PATH -u CUDA_HOME PATH="$path_without_nvcc" "$cmake" -S "$here/consumer" \
    -B "$cpu_consumer_build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_IGNORE_PREFIX_PATH="$hidden" -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"}
  check "the CPU-only consumer did not find the CUDA toolkit" test -z "$(grep '^CUDAToolkit_' "$cpu_consumer_build/CMakeCache.txt")"
  step env PATH="$path_without_nvcc" "$cmake" --build "$cpu_consumer_build"
  echo "package-test: $cpu_consumer_build/baton_weights_example (CPU-only consumer of a CUDA build)"
  env -u LD_LIBRARY_PATH "$cpu_consumer_build/baton_weights_example" "$work/weights-cpu.safetensors" |
    tee "$work/weights_cpu.log"
  check "the CPU-only consumer's weights example printed ok" grep -q '^weights-example: ok$' "$work/weights_cpu.log"
fi
echo "package-test: passed"
