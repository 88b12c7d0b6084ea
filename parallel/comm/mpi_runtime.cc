// MpiRuntime over the MpiEngine (a build with MPI).
#include "parallel/comm/mpi_runtime.h"

#include "parallel/comm/mpi_engine.h"

namespace baton::comm {

bool MpiRuntime::available() { return true; }

MpiRuntime::MpiRuntime() : engine_(std::make_shared<MpiEngine>()) {}
MpiRuntime::~MpiRuntime() = default;

int MpiRuntime::rank() const { return engine_->world_rank(); }
int MpiRuntime::size() const { return engine_->world_size(); }
int MpiRuntime::local_rank() const { return engine_->local_rank(); }
int MpiRuntime::local_size() const { return engine_->local_size(); }
std::string_view MpiRuntime::thread_level() const { return engine_->thread_level(); }
std::unique_ptr<Communicator> MpiRuntime::world() const { return make_mpi_world_communicator(engine_); }
void MpiRuntime::abort(const std::string& message) const { engine_->abort(message); }

}  // namespace baton::comm
