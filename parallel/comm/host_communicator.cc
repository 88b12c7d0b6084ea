// HostCommunicator: timeout, operation numbering and descriptions shared by the host backends.
#include "parallel/comm/host_communicator.h"

#include "runtime/core/error.h"

namespace baton::comm {

HostCommunicator::HostCommunicator(std::string_view backend, int rank, int size, std::chrono::milliseconds timeout)
    : backend_(backend),
      rank_(rank),
      size_(size),
      timeout_ms_(timeout.count()),
      next_send_(static_cast<size_t>(size)),
      next_recv_(static_cast<size_t>(size)) {}

void HostCommunicator::set_timeout(std::chrono::milliseconds timeout) {
  BATON_CHECK(timeout.count() > 0, backend_, " communicator: the timeout must be positive, not ", timeout.count(),
              " ms");
  timeout_ms_ = timeout.count();
}

std::string HostCommunicator::describe(OpKind kind, uint64_t seq) const {
  return detail::concat(op_name(kind), " #", seq, " on rank ", rank_, " of ", size_, " (", backend_, ")");
}

std::string HostCommunicator::check_all_reduce(const Tensor& buffer, ReduceOp op) const {
  std::string what = describe_next(OpKind::all_reduce);
  check_host_tensor(buffer, backend_, what + ": buffer");
  check_reducible(buffer, op, what + ": buffer");
  return what;
}

std::string HostCommunicator::check_broadcast(const Tensor& buffer, int root) const {
  std::string what = describe_next(OpKind::broadcast);
  check_host_tensor(buffer, backend_, what + ": buffer");
  check_root(root, size_, what);
  return what;
}

std::string HostCommunicator::check_all_gather(const Tensor& input, const Tensor& output) const {
  std::string what = describe_next(OpKind::all_gather);
  check_host_tensor(input, backend_, what + ": input");
  check_host_tensor(output, backend_, what + ": output");
  check_whole_of_parts(output, input, size_, what, "output", "input");
  return what;
}

std::string HostCommunicator::check_reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) const {
  std::string what = describe_next(OpKind::reduce_scatter);
  check_host_tensor(input, backend_, what + ": input");
  check_host_tensor(output, backend_, what + ": output");
  check_reducible(input, op, what + ": input");
  check_whole_of_parts(input, output, size_, what, "input", "output");
  return what;
}

HostCommunicator::PointToPoint HostCommunicator::number(OpKind kind, const Tensor& tensor, int peer) {
  const bool sending = kind == OpKind::send;
  const std::string_view direction = sending ? " to rank " : " from rank ";
  const std::string where = detail::concat(direction, peer, " on rank ", rank_, " of ", size_, " (", backend_, ")");
  const std::string unnumbered = detail::concat(op_name(kind), where);
  check_peer(peer, rank_, size_, unnumbered);
  check_host_tensor(tensor, backend_, unnumbered + ": tensor");
  std::vector<uint64_t>& counters = sending ? next_send_ : next_recv_;
  const uint64_t seq = counters[static_cast<size_t>(peer)]++;
  return {seq, detail::concat(op_name(kind), " #", seq, where)};
}

}  // namespace baton::comm
