// The NCCL backend ("nccl"): the ranks are CUDA devices, one communicator per device, in one process
// driving several GPUs or one process (or thread) per GPU. docs/data-parallel.md has the details.
#pragma once

#include <memory>
#include <vector>

#include "parallel/comm/communicator.h"
#include "runtime/core/device.h"

namespace baton::comm {

// One communicator per device of `devices` (element r is rank r, on devices[r]; CUDA devices, each
// at most once), made in this process. Each is then used from its own thread (or one thread issues
// to all in turn: operations return at once, except waits).
//
// Tensors must be on the communicator's device; an operation runs on the communicator's own
// non-blocking, highest-priority stream after the work issued so far on the caller's stream.
// Reductions go through ncclSum, summed in the fixed order of the emulated GPU, and NCCL's own order
// on GPUs; f16 and bf16 are accumulated in an f32 copy and rounded once; `mean` divides after the
// sum (a multiplication by 1 / size(): exact, and equal to the host backends' division, when size()
// is a power of two). A watchdog thread per communicator polls its operations and
// ncclCommGetAsyncError, and aborts the communicator on an NCCL error or an operation past its
// timeout; every pending and later operation of that rank then fails naming the cause.
// Throws baton::Error in builds without CUDA.
std::vector<std::unique_ptr<Communicator>> make_nccl_communicators(const std::vector<Device>& devices);

// One rank of an NCCL communicator whose ranks are those of `bootstrap` (any backend: the MPI world
// under mpirun, one process per GPU; or an inproc group, one thread per GPU), on `device`: rank 0 of
// `bootstrap` makes the NCCL unique id and broadcasts it through `bootstrap`, then every rank joins.
// Collective over `bootstrap`. Throws baton::Error in builds without CUDA.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, Device device);

}  // namespace baton::comm
