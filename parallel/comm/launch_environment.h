// LaunchEnvironment: this process's place in a multi-process job, as the launcher (mpirun / mpiexec
// of Open MPI or MPICH, or Slurm's srun) tells it through environment variables, read before MPI
// starts so that a command knows at once whether it is one of several processes.
#pragma once

#include <string>

namespace baton::comm {

struct LaunchEnvironment {
  int rank = 0;
  int size = 1;  // 1: a process on its own
  int local_rank = 0;
  std::string launcher;  // "Open MPI", "MPICH (PMI)", "Slurm" or "" (none)
};

// From OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK}, PMI_{RANK,SIZE} (MPI_LOCALRANKID) or
// SLURM_{PROCID,NTASKS,LOCALID}, the first set present; a malformed value is an error naming the
// variable.
LaunchEnvironment launch_environment();

}  // namespace baton::comm
