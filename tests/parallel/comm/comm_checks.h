// Checks of a Communicator that run the same way on every backend: each rank calls them with its own
// communicator (a thread of an inproc group, or an MPI process), builds every rank's input from a
// seed, computes the expected result here, in rank order, and compares its result with it bit for
// bit (so all ranks hold bitwise the same result). Failures are gtest failures naming the rank.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parallel/comm/communicator.h"
#include "tests/support/test_support.h"

namespace baton::comm::testing {

// The dtypes every reduction accepts, and the sizes the checks use (0, odd, above one block of 1024,
// not a multiple of any world size).
inline constexpr DType kReducibleDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64};
inline constexpr int64_t kSizes[] = {0, 1, 7, 1031, 4099};

// The device the checks put the calling thread's tensors on (a CPU device unless set): the NCCL
// tests make rank r's thread use cuda:r for its lifetime. Inputs and expected results are computed on
// the host either way; results are compared byte for byte.
class RankDevice {
 public:
  explicit RankDevice(Device device);
  ~RankDevice();
  RankDevice(const RankDevice&) = delete;
  RankDevice& operator=(const RankDevice&) = delete;

 private:
  Device previous_;
};
// A new stream on the calling thread's rank device.
Stream rank_stream();

// "rank 1 of 4 (mpi)", for failure messages.
std::string where(const Communicator& comm);

// Runs fn(comm) for every communicator on a thread of its own and joins them all; an exception
// escaping a rank is a test failure naming the rank.
void run_ranks(const std::vector<std::unique_ptr<Communicator>>& comms, const std::function<void(Communicator&)>& fn);

// Rank `rank`'s input: random values from (seed, rank) (integers in [-1000, 1000), u8 in [0, 256)), the same in every
// process.
Tensor rank_input(const Shape& shape, DType dtype, int rank, uint64_t seed);
// The reduction of `inputs` in order (inputs[0] + inputs[1] + ...), computed here: f32, f16, bf16
// accumulated in float, f64 in double, integers in int64; mean divides the sum once.
Tensor expected_reduction(const std::vector<Tensor>& inputs, ReduceOp op);
// Byte-for-byte equality, naming the first differing element.
::testing::AssertionResult same_bytes(const Tensor& actual, const Tensor& expected);

void check_all_reduce(Communicator& comm, DType dtype, ReduceOp op, int64_t numel, uint64_t seed);
void check_broadcast(Communicator& comm, DType dtype, int root, int64_t numel, uint64_t seed);
void check_all_gather(Communicator& comm, DType dtype, int64_t numel, uint64_t seed);
void check_reduce_scatter(Communicator& comm, DType dtype, ReduceOp op, int64_t numel_per_rank, uint64_t seed);
// The checks above over every dtype they accept (reductions: sum and, for floating dtypes, mean),
// every size of kSizes and (broadcast) every root.
void check_every_all_reduce(Communicator& comm);
void check_every_broadcast(Communicator& comm);
void check_every_all_gather(Communicator& comm);
void check_every_reduce_scatter(Communicator& comm);

// Every rank sends `messages` tensors to the next rank and receives as many from the previous one,
// all sends issued before the receives (a send never holds up the operations after it).
void check_ring_exchange(Communicator& comm, int messages, int64_t numel, uint64_t seed);
// split(rank % 2, -rank) (reversed order inside each color; colors >= 2 ranks), then an all_reduce
// in each part; with `drop_last`, the last rank passes a negative color and must get nullptr.
void check_split(Communicator& comm, bool drop_last);

// 16 all_reduces issued before any wait: waiting for the last one finds every earlier one done
// (operations run in issue order), each with its own result.
void check_many_in_flight(Communicator& comm);
// wait_on(a CPU stream) waits like wait(); barriers pass.
void check_wait_on_and_barrier(Communicator& comm);

// check_agreement: equal descriptions pass; a rank whose line 18 differs, one with a line more and
// one with a line fewer make every rank throw the same message naming them and their lines.
void check_agreement_cases(Communicator& comm);

// Bad arguments are refused by the issuing call with a clear message, taking no sequence number
// (local: the other ranks need not call it).
void check_refused_arguments(Communicator& comm);

}  // namespace baton::comm::testing
