// Output of a command run as one of several processes (mpirun / srun): rank 0 prints, the others
// speak only of errors; files each process writes for itself are named after its rank.
#pragma once

#include <string>

namespace baton::cli {

// "t.json" -> "t.rank1.json" ("trace" -> "trace.rank1"): the file of `rank` beside `path`.
std::string rank_path(const std::string& path, int rank);

// Sends this process's standard output to /dev/null (the processes of a job other than rank 0).
void quiet_stdout();

}  // namespace baton::cli
