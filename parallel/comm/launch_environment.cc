// Reading the launcher's environment variables (see launch_environment.h) and BATON_MPI_REDUCTION.
#include "parallel/comm/launch_environment.h"

#include <cstdlib>
#include <string_view>

#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

// The variable as an int in [low, high], or `fallback` when it is not set.
int integer_variable(const char* name, int fallback, int low, int high) {
  const char* text = std::getenv(name);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  BATON_CHECK(end != text && *end == '\0' && value >= low && value <= high, "environment variable ", name, " is '",
              text, "', expected an integer in [", low, ", ", high, "]");
  return static_cast<int>(value);
}

struct Names {
  const char* launcher;
  const char* size;
  const char* rank;
  const char* local_rank;
};

constexpr Names kLaunchers[] = {
    {"Open MPI", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"MPICH (PMI)", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"},
    {"Slurm", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID"},
};

}  // namespace

LaunchEnvironment launch_environment() {
  constexpr int kMaxProcesses = 1 << 24;
  for (const Names& n : kLaunchers) {
    if (std::getenv(n.size) == nullptr) continue;
    LaunchEnvironment env;
    env.launcher = n.launcher;
    env.size = integer_variable(n.size, 1, 1, kMaxProcesses);
    env.rank = integer_variable(n.rank, 0, 0, env.size - 1);
    env.local_rank = integer_variable(n.local_rank, 0, 0, env.size - 1);
    return env;
  }
  return {};
}

MpiReduction mpi_reduction_from_environment() {
  const char* text = std::getenv("BATON_MPI_REDUCTION");
  const std::string_view value = text == nullptr ? "" : text;
  if (value.empty() || value == "native") return MpiReduction::native;
  if (value == "rank-order") return MpiReduction::rank_order;
  BATON_FAIL("environment variable BATON_MPI_REDUCTION is '", value, "', expected native or rank-order");
}

std::string_view mpi_reduction_name(MpiReduction reduction) {
  return reduction == MpiReduction::native ? "native" : "rank-order";
}

}  // namespace baton::comm
