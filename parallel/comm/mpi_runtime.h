// MpiRuntime: MPI for a multi-process run (mpirun / srun), initialised once per process and
// finalised when it and every communicator made from it are gone; world() is the communicator of
// all processes (the "mpi" backend). Available when baton was built with MPI (BATON_HAVE_MPI).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "parallel/comm/communicator.h"

namespace baton::comm {

class MpiEngine;

class MpiRuntime {
 public:
  // True when baton was built with MPI; otherwise the constructor throws.
  static bool available();

  // Initialises MPI on the runtime's communication thread, which makes every MPI call of the
  // operations (MPI_Init_thread asks for MPI_THREAD_MULTIPLE, needed only so that a wait() that
  // timed out may call MPI_Abort from its own thread). Throws baton::Error when baton was built
  // without MPI, when MPI fails to start, or when this process already initialised MPI.
  MpiRuntime();
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int rank() const;  // in MPI_COMM_WORLD
  int size() const;
  int local_rank() const;  // among the processes of this node (MPI_COMM_TYPE_SHARED)
  int local_size() const;
  std::string_view thread_level() const;  // what MPI_Init_thread provided: "MPI_THREAD_MULTIPLE"

  // A new communicator over every process (a duplicate of MPI_COMM_WORLD); collective: every
  // process calls it, in the same order as its other collectives.
  std::unique_ptr<Communicator> world() const;

  // The baseline of `baton bench comm`: MPI_Barrier, then `calls` blocking MPI_Allreduce(MPI_IN_PLACE,
  // MPI_SUM) of `buffer` (a CPU tensor of f32 or f64) over MPI_COMM_WORLD back to back, made on the
  // communication thread as a program calling MPI directly would make them; returns the seconds the
  // calls took (from after the barrier). MPI picks the algorithm and the summation order. Collective:
  // every process calls it with the same shape, dtype and `calls`.
  double time_raw_all_reduce(const Tensor& buffer, int calls) const;
  // A barrier over MPI_COMM_WORLD that waits without polling the cores (MPI_Ibarrier, tested every
  // millisecond), so that one process can measure something alone while the others wait. Past
  // `timeout` the job ends (MPI_Abort), naming the barrier. Collective.
  void idle_barrier(std::chrono::milliseconds timeout) const;

  // Prints "baton mpi: rank R of N: <message>; ending the job (MPI_Abort)" on stderr and ends every
  // process of the job (a failure on one rank must not leave the others waiting for it).
  [[noreturn]] void abort(const std::string& message) const;

 private:
  std::shared_ptr<MpiEngine> engine_;
};

}  // namespace baton::comm
