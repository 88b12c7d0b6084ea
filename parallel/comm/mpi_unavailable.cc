// MpiRuntime in a build without MPI: it says so (the class exists so that callers build either way).
#include "parallel/comm/mpi_runtime.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

[[noreturn]] void unavailable() {
  BATON_FAIL(
      "baton was built without MPI (BATON_HAVE_MPI is 0): install Open MPI (tools/install-deps.sh installs "
      "libopenmpi-dev and openmpi-bin) and configure again with -DBATON_MPI=AUTO or ON");
}

}  // namespace

bool MpiRuntime::available() { return false; }

MpiRuntime::MpiRuntime() { unavailable(); }
MpiRuntime::~MpiRuntime() = default;

int MpiRuntime::rank() const { unavailable(); }
int MpiRuntime::size() const { unavailable(); }
int MpiRuntime::local_rank() const { unavailable(); }
int MpiRuntime::local_size() const { unavailable(); }
std::string_view MpiRuntime::thread_level() const { unavailable(); }
std::unique_ptr<Communicator> MpiRuntime::world(MpiReduction) const { unavailable(); }
double MpiRuntime::time_raw_all_reduce(const Tensor&, int) const { unavailable(); }
void MpiRuntime::idle_barrier(std::chrono::milliseconds) const { unavailable(); }
void MpiRuntime::abort(const std::string&) const { unavailable(); }

}  // namespace baton::comm
