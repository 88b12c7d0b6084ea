// MpiRuntime over the MpiEngine (a build with MPI).
#include "parallel/comm/mpi_runtime.h"

#include <chrono>
#include <limits>
#include <thread>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/mpi_calls.h"
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
std::unique_ptr<Communicator> MpiRuntime::world(MpiReduction reduction) const {
  return make_mpi_world_communicator(engine_, reduction);
}
void MpiRuntime::abort(const std::string& message) const { engine_->abort(message); }

double MpiRuntime::time_raw_all_reduce(const Tensor& buffer, int calls) const {
  BATON_CHECK(buffer.defined() && buffer.device().is_cpu(), "time_raw_all_reduce: a CPU tensor is needed");
  BATON_CHECK(buffer.dtype() == DType::f32 || buffer.dtype() == DType::f64,
              "time_raw_all_reduce: f32 or f64 only, got ", dtype_name(buffer.dtype()));
  BATON_CHECK(buffer.numel() <= std::numeric_limits<int>::max(), "time_raw_all_reduce: ", buffer.numel(),
              " elements do not fit an MPI count");
  BATON_CHECK(calls >= 1, "time_raw_all_reduce: calls must be >= 1, got ", calls);
  double seconds = 0;
  // As the backend's operations: watched, and an MPI error ends the job.
  const char* what = "MPI_Allreduce (the raw baseline of a benchmark)";
  engine_->run([&] {
    engine_->watch(what, default_timeout(), "any rank");
    try {
      check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) {
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data_ptr(), static_cast<int>(buffer.numel()),
                                mpi_type(buffer.dtype()), MPI_SUM, MPI_COMM_WORLD),
                  "MPI_Allreduce");
      }
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (const std::exception& e) {
      engine_->abort(std::string(what) + ": " + e.what());
    }
    engine_->unwatch();
  });
  return seconds;
}

void MpiRuntime::idle_barrier(std::chrono::milliseconds timeout) const {
  const char* what = "MPI_Ibarrier (a process waiting while another measures)";
  engine_->run([&] {
    engine_->watch(what, timeout, "any rank");
    try {
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
      int done = 0;
      while (true) {
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done != 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    } catch (const std::exception& e) {
      engine_->abort(std::string(what) + ": " + e.what());
    }
    engine_->unwatch();
  });
}

}  // namespace baton::comm
