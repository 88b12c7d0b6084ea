// What every backend checks of an operation's arguments before it queues it, the split of an element
// range among ranks, and the names and descriptions the error messages use.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/comm/communicator.h"

namespace baton::comm {

// The operations, named as in error messages ("all_reduce #3 on rank 1 of 4").
enum class OpKind { all_reduce, broadcast, all_gather, reduce_scatter, send, recv, barrier, split };
std::string_view op_name(OpKind kind);
std::string_view reduce_op_name(ReduceOp op);

// Elements [begin, begin + count) of part `index` when `numel` elements are cut into `parts` parts
// whose sizes differ by at most one, the first ones larger.
struct ElementRange {
  int64_t begin = 0;
  int64_t count = 0;
};
ElementRange chunk_range(int64_t numel, int parts, int index);

// Throws baton::Error naming `what` (e.g. "inproc all_reduce on rank 1: buffer") unless `tensor` is
// defined and on a CPU device (a CUDA tensor is refused: GPUs communicate through NCCL).
void check_host_tensor(const Tensor& tensor, std::string_view backend, std::string_view what);
// Also: the dtype can be reduced with `op` (no u8; `mean` only for floating dtypes).
void check_reducible(const Tensor& tensor, ReduceOp op, std::string_view what);
// all_gather / reduce_scatter: `whole` has `parts` x `piece.numel()` elements of piece's dtype.
void check_whole_of_parts(const Tensor& whole, const Tensor& piece, int parts, std::string_view what,
                          std::string_view whole_name, std::string_view piece_name);
void check_root(int root, int size, std::string_view what);
void check_peer(int peer, int rank, int size, std::string_view what);

// "ranks 1, 3" / "rank 2" / "no rank".
std::string describe_ranks(const std::vector<int>& ranks);

// The default timeout of a new communicator: BATON_COMM_TIMEOUT (seconds, e.g. "30" or "0.5") when
// set, else 60 s. A malformed value throws baton::Error naming the variable.
std::chrono::milliseconds default_timeout();

}  // namespace baton::comm
