// Output of a command run as one of several processes (mpirun / srun): rank 0 prints, the others
// speak only of errors (files each process writes for itself: parallel::rank_path).
#pragma once

namespace baton::cli {

// Sends this process's standard output to /dev/null (the processes of a job other than rank 0).
void quiet_stdout();

}  // namespace baton::cli
