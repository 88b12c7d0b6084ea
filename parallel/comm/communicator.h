// Communicator: collectives and point-to-point messages among the ranks of a group, asynchronous,
// behind one interface for the in-process, MPI and NCCL backends (docs/data-parallel.md).
//
// Ordering. Every rank issues the same operations in the same order (collectives and the matching
// send/recv pairs); a backend runs them in issue order. An operation starts after the work issued
// so far on `stream` (the stream that produced the tensor) and runs on the communicator's own
// thread or stream, so the caller keeps computing while bytes move. Until its Work completes the
// caller must neither read nor write the tensors it was given.
//
// Numbering. Collectives (split and barrier included) are numbered per communicator from 0, sends
// and receives per peer and direction from 0; messages name them ("all_reduce #3 on rank 1 of 4").
// One communicator is used from one thread at a time (each rank's own thread for inproc).
//
// Tensors are contiguous, on the communicator's device() (CPU devices for inproc and mpi), and of
// the same shape and dtype on every rank. Reductions: f32 and f64 summed in their own type, f16
// and bf16 accumulated in f32 and rounded once; i32 and i64 summed exactly (wrapping around on
// overflow); u8 is not reducible and `mean` is for floating dtypes only; `mean` divides the sum
// by size() once, after summation. Every rank holds bitwise the same result: inproc (and mpi with
// MpiReduction::rank_order) sums rank 0 + rank 1 + ... for every element; mpi's default (native)
// leaves the order to MPI_Allreduce, whose algorithms give every rank the same bits.
//
// Failures. Bad arguments throw baton::Error from the issuing call. A rank that does not issue an
// operation its peers wait for is reported when the timeout expires: the inproc backend throws
// from wait() (and aborts its group, so every rank's pending operations fail too); the mpi backend
// prints one line and ends the whole job with MPI_Abort; the nccl backend aborts that rank's NCCL
// communicator (wait() or its watchdog), and every pending and later operation of the rank throws.
// docs/data-parallel.md has the details.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string_view>

#include "runtime/core/stream.h"
#include "runtime/core/tensor.h"

namespace baton::comm {

enum class ReduceOp { sum, mean };

// When an operation ran: its backend began it (its thread took it up, before waiting for peers)
// and it completed or failed; unset until then, or when a backend does not record it.
struct WorkTimes {
  std::optional<std::chrono::steady_clock::time_point> started, finished;
};

// The completion of one asynchronous operation.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks the host until the operation has completed. Throws baton::Error naming the operation,
  // the rank and the cause when it failed, or when it did not complete within the communicator's
  // timeout (a peer died or never issued the matching operation; mpi ends the job instead).
  virtual void wait() = 0;
  // True once the operation has completed or failed (never throws, never blocks).
  virtual bool done() const = 0;
  // Work issued on `stream` after this call runs after the operation (a CUDA stream waits on an
  // event; a CPU stream, which runs work at issue, blocks here like wait()).
  virtual void wait_on(const Stream& stream) = 0;
  // For traces and overlap measurements (never blocks).
  virtual WorkTimes times() const { return {}; }
};
using WorkHandle = std::shared_ptr<Work>;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "inproc", "mpi" or "nccl".
  virtual std::string_view backend() const = 0;
  // Where the tensors it moves live: the rank's GPU for nccl; the host backends take tensors of any
  // CPU device and answer cpu:0.
  virtual Device device() const { return Device::cpu(); }
  // How long wait() waits before it reports the operation as failed, for operations issued from
  // now on (default 60 s, or BATON_COMM_TIMEOUT seconds; communicators made by split inherit it).
  virtual void set_timeout(std::chrono::milliseconds timeout) = 0;

  // In place: every rank's `buffer` becomes the sum (or mean) of all ranks' buffers.
  virtual WorkHandle all_reduce(const Tensor& buffer, ReduceOp op, const Stream& stream) = 0;
  // In place: every rank's `buffer` becomes rank `root`'s.
  virtual WorkHandle broadcast(const Tensor& buffer, int root, const Stream& stream) = 0;
  // `output` (size() x input.numel() elements) becomes every rank's `input`, in rank order.
  virtual WorkHandle all_gather(const Tensor& input, const Tensor& output, const Stream& stream) = 0;
  // `output` becomes this rank's slice (rank() x output.numel() onwards) of the reduction of every
  // rank's `input` (size() x output.numel() elements).
  virtual WorkHandle reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, const Stream& stream) = 0;
  // Point to point (pipelines across processes): `tensor` goes to / comes from rank `peer`; the
  // n-th send from a to b matches the n-th recv at b from a.
  virtual WorkHandle send(const Tensor& tensor, int peer, const Stream& stream) = 0;
  virtual WorkHandle recv(const Tensor& tensor, int peer, const Stream& stream) = 0;
  // Blocks until every rank has reached it (or throws after the timeout).
  virtual void barrier() = 0;

  // Collective over all ranks: the ranks passing the same `color` (>= 0) form a new communicator of
  // the same backend, ranked by (key, old rank); a rank passing a negative color gets nullptr.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // A peer in this process failed and will not issue its side: fails every pending and later
  // operation of every rank of this communicator with `reason`, at once instead of at the timeout.
  // Returns false where the backend has no such abort (mpi, nccl: their watchdogs end the wait).
  virtual bool abort_in_process(const std::string& reason) {
    (void)reason;
    return false;
  }
};

}  // namespace baton::comm
