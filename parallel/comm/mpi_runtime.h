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

// How the mpi backend reduces (all_reduce, reduce_scatter); docs/data-parallel.md "Summation order".
enum class MpiReduction {
  // MPI_Allreduce / MPI_Reduce_scatter_block with MPI_SUM: MPI's own algorithm and summation order,
  // as fast as calling MPI directly. f16 and bf16, which MPI cannot sum, are reduced in rank order.
  native,
  // All-to-all, rank 0 + rank 1 + ... summed here, all-gather: bitwise the inproc backend's result
  // for every world size, at the price of two collectives and a local pass.
  rank_order,
};
// BATON_MPI_REDUCTION: "native" (also when unset or empty) or "rank-order"; anything else throws
// baton::Error naming the variable.
MpiReduction mpi_reduction_from_environment();
std::string_view mpi_reduction_name(MpiReduction reduction);  // "native", "rank-order"

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

  // A new communicator over every process (a duplicate of MPI_COMM_WORLD) reducing as `reduction`
  // says (communicators split from it inherit it); collective: every process calls it, in the same
  // order as its other collectives, with the same `reduction`.
  std::unique_ptr<Communicator> world(MpiReduction reduction = mpi_reduction_from_environment()) const;

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
