# Sourced by the end-to-end scripts of tests/tools (run_mpi_train.sh, run_mpi_bench.sh,
# run_gpu_train.sh): reads "<baton> [<mpiexec> <its arguments...>]" into $baton and the array
# mpiexec, makes a scratch folder $dir removed on exit, and fail() records a failure (the script
# exits with $failed at its end).
baton=$1
shift
mpiexec=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() {
  echo "$(basename "$0" .sh): FAILED: $*" >&2
  failed=1
}
