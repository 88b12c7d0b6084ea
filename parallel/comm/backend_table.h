// The one table that chooses a communicator backend: from the kind of the ranks' devices (CPU or GPU)
// and how the ranks were launched (threads of this process, or processes under mpirun / srun) to the
// in-process, MPI, NCCL or NCCL-over-MPI backend, with an explicit override (ParallelConfig's
// comm_backend). Every other file makes its communicators here (docs/data-parallel.md, "Backends").
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "parallel/comm/communicator.h"
#include "runtime/core/device.h"

namespace baton::comm {

enum class CommBackend {
  automatic,  // "auto": the table's row for the devices and the launcher
  inproc,     // "inproc": threads of one process on CPU devices
  mpi,        // "mpi": one process per rank under mpirun / srun, on CPU devices
  nccl,       // "nccl": GPUs driven from one process (a thread each)
  nccl_mpi,   // "nccl-mpi": one process per GPU under mpirun / srun, NCCL bootstrapped over MPI
};

enum class Launcher {
  threads,    // every rank is a thread of this process
  processes,  // every rank is a process of a job started by mpirun / mpiexec / srun
};

// "auto", "inproc", "mpi", "nccl", "nccl-mpi".
std::string_view comm_backend_name(CommBackend backend);
// `text` as a CommBackend; anything else is one error naming `field` and the five names.
CommBackend parse_comm_backend(std::string_view text, std::string_view field);

// The table:            threads    processes
//   CPU devices         inproc     mpi
//   GPUs                nccl       nccl-mpi
// The row of `device`'s kind and `launcher` when `requested` is automatic; otherwise `requested`, which
// must be that row's backend (and, for mpi and nccl-mpi, baton built with MPI): else one error naming
// the field comm_backend, what it cannot serve and what would.
CommBackend choose_comm_backend(const Device& device, Launcher launcher,
                                CommBackend requested = CommBackend::automatic);

// One communicator per device of `devices` (rank r on devices[r]), each rank a thread of this process:
// an inproc group on CPU devices, NCCL on GPUs. The devices are all CPU devices or all GPUs (else one
// error naming both, `ranks` saying whose they are: "hybrid stage 1's replicas").
std::vector<std::unique_ptr<Communicator>> make_thread_communicators(const std::vector<Device>& devices,
                                                                     CommBackend requested = CommBackend::automatic,
                                                                     std::string_view ranks = "the ranks");

// This rank's communicator for tensors on `device`, the ranks being processes whose host communicator
// is `host` (the launcher's MPI world, or one split from it; tests stand threads with an inproc group
// in for the processes): `host` itself on CPU devices (mpi), else an NCCL communicator bootstrapped
// over `host` (nccl-mpi; collective over `host`, which it does not keep).
std::unique_ptr<Communicator> make_process_communicator(std::unique_ptr<Communicator> host, Device device,
                                                        CommBackend requested = CommBackend::automatic);
std::shared_ptr<Communicator> make_process_communicator(std::shared_ptr<Communicator> host, Device device,
                                                        CommBackend requested = CommBackend::automatic);

// Whether the point-to-point messages of `backend` run in issue order on one stream, so that one
// waiting for its receiver holds up those behind it (nccl, nccl-mpi): a pipeline then gives every
// directed link between two ranks its own communicator (parallel/pipeline/pipeline_links.h).
bool messages_wait_in_issue_order(CommBackend backend);

}  // namespace baton::comm
