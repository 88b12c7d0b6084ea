#!/usr/bin/env bash
# Runs a job that loses a rank (mpi_failure_main.cc) and checks that it ends with a non-zero status
# within a time bound, never hanging, and that its output names the lost rank (1).
# Usage: run_mpi_failure.sh <exit|hang> <bound-seconds> <mpiexec> <its arguments...> <program>
set -uo pipefail

scenario=$1
bound=$2
shift 2
case "$scenario" in
  # mpirun reports the process that exited ("Process name: [[job,1],1]" in Open MPI).
  exit) pattern='\[\[[0-9]+,[0-9]+\],1\]|rank 1 .*exit|exited.*rank 1' ;;
  # The survivors' watchdog or wait(): "... did not complete within 1500 ms; peers that may have
  # failed or not issued it: world rank 1".
  hang) pattern='did not complete within [0-9]+ ms; peers that may have failed or not issued it: world ranks? ([0-9]+, )*1(,|;|$)' ;;
  *) echo "run_mpi_failure: unknown scenario '$scenario'" >&2; exit 2 ;;
esac

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=${EPOCHREALTIME/./}
timeout --kill-after=5 $((bound * 3)) "$@" "$scenario" >"$log" 2>&1
status=$?
elapsed_ms=$(((${EPOCHREALTIME/./} - start) / 1000))
cat "$log"

failed=0
fail() {
  echo "run_mpi_failure: FAILED: $*" >&2
  failed=1
}
if [[ $status -eq 0 ]]; then fail "the job exited with status 0"; fi
if [[ $status -eq 124 || $status -eq 137 ]]; then fail "the job hung and was killed after $((bound * 3)) s"; fi
if ((elapsed_ms > bound * 1000)); then fail "the job took ${elapsed_ms} ms, more than ${bound} s"; fi
# The lost rank's own message does not count: the line must come from mpirun or a survivor.
if ! grep -v '^rank 1: ' "$log" | grep -Eq "$pattern"; then fail "no line names rank 1 (expected /$pattern/)"; fi
echo "run_mpi_failure: $scenario: exit status $status after ${elapsed_ms} ms (bound ${bound} s)"
exit $failed
