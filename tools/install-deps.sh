#!/usr/bin/env bash
# Installs the Debian packages baton needs to build and test; safe to run again (idempotent).
# oneDNN's CMake package (libdnnl-dev) requires OpenCL's headers and loader (ocl-icd-opencl-dev).
# Open MPI (libopenmpi-dev, openmpi-bin) is installed by default so that the mpi backend is built
# and its tests run; --without-mpi leaves it out (--with-mpi, the former opt-in, is still accepted).
# --with-format adds clang-format (make format); --with-clang adds clang and its sanitizer and libFuzzer
# runtimes (make test-asan, tools/fuzz.sh).
# Usage: tools/install-deps.sh [--without-mpi] [--with-format] [--with-clang]
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev nlohmann-json3-dev
          libcli11-dev libgtest-dev libgmock-dev libdnnl-dev ocl-icd-opencl-dev)
with_mpi=1
for option in "$@"; do
  case "$option" in
    --with-mpi) with_mpi=1 ;;
    --without-mpi) with_mpi=0 ;;
    --with-format) packages+=(clang-format) ;;
    --with-clang) packages+=(clang libclang-rt-dev) ;;
    *) echo "install-deps: unknown option '$option' (expected --without-mpi, --with-mpi, --with-format or --with-clang)" >&2; exit 2 ;;
  esac
done
if [[ $with_mpi -eq 1 ]]; then packages+=(libopenmpi-dev openmpi-bin); fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian-based system (no dpkg-query/apt-get); cannot check or install packages." >&2
  echo "  Install the equivalents of: ${packages[*]}" >&2
  echo "  (CMake >= 3.24, Ninja, a C++20 compiler, Eigen 3, nlohmann-json, CLI11, GoogleTest) and point" >&2
  echo "  CMAKE_PREFIX_PATH at them if they are not in a standard location; continuing." >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these packages (or their equivalents) by hand:" >&2
  echo "  ${missing[*]}" >&2
  echo "  then point CMAKE_PREFIX_PATH at them if they are not in a standard location." >&2
  exit 1
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    # Without a terminal (CI) sudo must not wait for a password: -n fails at once instead.
    if [[ -t 0 ]]; then sudo_cmd=(sudo); else sudo_cmd=(sudo -n); fi
  else
    echo "install-deps: not root and sudo is missing; as root run: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
