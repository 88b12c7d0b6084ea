// MpiRuntime in a build without MPI: it says so (the class exists so that callers build either way).
#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

[[noreturn]] void mpi_unavailable() {
  BATON_FAIL(
      "baton was built without MPI (BATON_HAVE_MPI is 0): install Open MPI (tools/install-deps.sh installs "
      "libopenmpi-dev and openmpi-bin) and configure again with -DBATON_MPI=AUTO or ON");
}

}  // namespace

bool MpiRuntime::available() { return false; }

MpiRuntime::MpiRuntime() { mpi_unavailable(); }
MpiRuntime::~MpiRuntime() = default;

int MpiRuntime::rank() const { mpi_unavailable(); }
int MpiRuntime::size() const { mpi_unavailable(); }
int MpiRuntime::local_rank() const { mpi_unavailable(); }
int MpiRuntime::local_size() const { mpi_unavailable(); }
std::string_view MpiRuntime::thread_level() const { mpi_unavailable(); }
std::unique_ptr<Communicator> MpiRuntime::world(MpiReduction) const { mpi_unavailable(); }
double MpiRuntime::time_raw_all_reduce(const Tensor&, int) const { mpi_unavailable(); }
void MpiRuntime::idle_barrier(std::chrono::milliseconds) const { mpi_unavailable(); }
void MpiRuntime::abort(const std::string&) const { mpi_unavailable(); }

}  // namespace baton::comm
