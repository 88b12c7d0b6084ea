// Argument checks, element ranges, names and the default timeout shared by the communicator backends.
#include "parallel/comm/collective_args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton::comm {

std::string_view op_name(OpKind kind) {
  constexpr std::string_view kNames[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                         "send",       "recv",      "barrier",    "split"};
  return enum_lookup<OpKind::split>(kind, kNames, "unknown operation");
}

std::string_view reduce_op_name(ReduceOp op) { return op == ReduceOp::sum ? "sum" : "mean"; }

ElementRange chunk_range(int64_t numel, int parts, int index) {
  const int64_t base = numel / parts;
  const int64_t extra = numel % parts;
  const int64_t begin = index * base + std::min<int64_t>(index, extra);
  return {begin, base + (index < extra ? 1 : 0)};
}

void check_host_tensor(const Tensor& tensor, std::string_view backend, std::string_view what) {
  BATON_CHECK(tensor.defined(), what, " is an undefined tensor");
  BATON_CHECK(!tensor.device().is_cuda(), what, " is on ", tensor.device().str(), ": the ", backend,
              " communicator moves host (CPU) tensors only; GPU tensors are reduced through NCCL");
}

void check_reducible(const Tensor& tensor, ReduceOp op, std::string_view what) {
  const DType dtype = tensor.dtype();
  BATON_CHECK(dtype != DType::u8, what, " has dtype u8, which cannot be reduced (f32, f64, f16, bf16, i32, i64 can)");
  BATON_CHECK(op != ReduceOp::mean || is_floating(dtype), what, " has dtype ", dtype_name(dtype),
              ": mean is defined for floating dtypes only (use sum for integers)");
}

void check_whole_of_parts(const Tensor& whole, const Tensor& piece, int parts, std::string_view what,
                          std::string_view whole_name, std::string_view piece_name) {
  BATON_CHECK(whole.dtype() == piece.dtype(), what, ": ", whole_name, " has dtype ", dtype_name(whole.dtype()), " but ",
              piece_name, " has ", dtype_name(piece.dtype()));
  BATON_CHECK(whole.numel() == parts * piece.numel(), what, ": ", whole_name, " has ", whole.numel(), " elements ",
              whole.shape().str(), " but must hold ", parts, " ranks x ", piece.numel(), " elements of ", piece_name,
              " ", piece.shape().str(), " = ", parts * piece.numel());
}

void check_root(int root, int size, std::string_view what) {
  BATON_CHECK(root >= 0 && root < size, what, ": root ", root, " is not a rank of this communicator (0..", size - 1,
              ")");
}

void check_peer(int peer, int rank, int size, std::string_view what) {
  BATON_CHECK(peer >= 0 && peer < size, what, ": peer ", peer, " is not a rank of this communicator (0..", size - 1,
              ")");
  BATON_CHECK(peer != rank, what, ": peer ", peer, " is this rank itself");
}

std::string describe_ranks(const std::vector<int>& ranks) {
  if (ranks.empty()) return "no rank";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::chrono::milliseconds default_timeout() {
  const char* text = std::getenv("BATON_COMM_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::seconds(60);
  errno = 0;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  BATON_CHECK(errno == 0 && end != text && *end == '\0' && std::isfinite(seconds) && seconds > 0 && seconds < 1e7,
              "BATON_COMM_TIMEOUT='", text, "': expected a positive number of seconds (e.g. 30 or 0.5)");
  return std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000.0)));
}

}  // namespace baton::comm
