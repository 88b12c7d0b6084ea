// NcclCommunicator: the Communicator interface over one NcclRank: argument checks, numbering and
// descriptions, the NCCL calls of each operation, and f16/bf16 reductions through an f32 copy.
#include <nccl.h>

#include "kernels/elementwise.h"
#include "parallel/comm/collective_args.h"
#include "parallel/comm/nccl_rank.h"
#include "runtime/core/cuda/nccl_check.h"
#include "runtime/core/enum_table.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  constexpr ncclDataType_t kTypes[] = {ncclFloat32, ncclFloat64, ncclFloat16, ncclBfloat16,
                                       ncclInt32,   ncclInt64,   ncclUint8};  // in DType's order
  const ncclDataType_t type = enum_lookup<DType::u8>(dtype, kTypes, ncclNumTypes);
  if (type == ncclNumTypes) throw Error(detail::concat("nccl: no NCCL type for dtype ", dtype_name(dtype)));
  return type;
}

cudaStream_t as_cuda(void* stream) { return static_cast<cudaStream_t>(stream); }

bool accumulates_in_f32(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16; }

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(std::shared_ptr<NcclRank> rank)
      : rank_(std::move(rank)), next_send_(static_cast<size_t>(size())), next_recv_(static_cast<size_t>(size())) {}

  int rank() const override { return rank_->rank(); }
  int size() const override { return rank_->size(); }
  std::string_view backend() const override { return "nccl"; }
  Device device() const override { return rank_->device(); }
  void set_timeout(std::chrono::milliseconds timeout) override {
    BATON_CHECK(timeout.count() > 0, "nccl communicator: the timeout must be positive, not ", timeout.count(), " ms");
    rank_->set_timeout(timeout);
  }

  WorkHandle all_reduce(const Tensor& buffer, ReduceOp op, const Stream& stream) override {
    const std::string what = describe_next(OpKind::all_reduce);
    check_tensor(buffer, what + ": buffer");
    check_reducible(buffer, op, what + ": buffer");
    ++next_collective_;
    return rank_->issue(what, stream, {buffer}, [&](ncclComm_t comm, void* s) {
      reduce(buffer, buffer, op, [&](const Tensor& in, const Tensor& out) {
        BATON_NCCL_CHECK(ncclAllReduce(in.data_ptr(), out.data_ptr(), static_cast<size_t>(out.numel()),
                                       nccl_type(out.dtype()), ncclSum, comm, as_cuda(s)));
      });
    });
  }

  WorkHandle broadcast(const Tensor& buffer, int root, const Stream& stream) override {
    const std::string what = describe_next(OpKind::broadcast);
    check_tensor(buffer, what + ": buffer");
    check_root(root, size(), what);
    ++next_collective_;
    return rank_->issue(what, stream, {buffer}, [&](ncclComm_t comm, void* s) {
      BATON_NCCL_CHECK(ncclBroadcast(buffer.data_ptr(), buffer.data_ptr(), static_cast<size_t>(buffer.numel()),
                                     nccl_type(buffer.dtype()), root, comm, as_cuda(s)));
    });
  }

  WorkHandle all_gather(const Tensor& input, const Tensor& output, const Stream& stream) override {
    const std::string what = describe_next(OpKind::all_gather);
    check_tensor(input, what + ": input");
    check_tensor(output, what + ": output");
    check_whole_of_parts(output, input, size(), what, "output", "input");
    ++next_collective_;
    return rank_->issue(what, stream, {input, output}, [&](ncclComm_t comm, void* s) {
      BATON_NCCL_CHECK(ncclAllGather(input.data_ptr(), output.data_ptr(), static_cast<size_t>(input.numel()),
                                     nccl_type(input.dtype()), comm, as_cuda(s)));
    });
  }

  WorkHandle reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op, const Stream& stream) override {
    const std::string what = describe_next(OpKind::reduce_scatter);
    check_tensor(input, what + ": input");
    check_tensor(output, what + ": output");
    check_reducible(input, op, what + ": input");
    check_whole_of_parts(input, output, size(), what, "input", "output");
    ++next_collective_;
    return rank_->issue(what, stream, {input, output}, [&](ncclComm_t comm, void* s) {
      reduce(input, output, op, [&](const Tensor& in, const Tensor& out) {
        BATON_NCCL_CHECK(ncclReduceScatter(in.data_ptr(), out.data_ptr(), static_cast<size_t>(out.numel()),
                                           nccl_type(out.dtype()), ncclSum, comm, as_cuda(s)));
      });
    });
  }

  WorkHandle send(const Tensor& tensor, int peer, const Stream& stream) override {
    return point_to_point(true, tensor, peer, stream);
  }
  WorkHandle recv(const Tensor& tensor, int peer, const Stream& stream) override {
    return point_to_point(false, tensor, peer, stream);
  }

  void barrier() override {
    const std::string what = describe_next(OpKind::barrier);
    ++next_collective_;
    const Tensor token = Tensor::empty(Shape{1}, DType::i32, rank_->comm_stream());
    rank_
        ->issue(what, rank_->comm_stream(), {token},
                [&](ncclComm_t comm, void* s) {
                  BATON_NCCL_CHECK(
                      ncclAllReduce(token.data_ptr(), token.data_ptr(), 1, ncclInt32, ncclSum, comm, as_cuda(s)));
                })
        ->wait();
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    const std::string what = describe_next(OpKind::split);
    ++next_collective_;
    ncclComm_t part = nullptr;
    rank_->with_comm([&](ncclComm_t comm) {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      const ncclResult_t result = ncclCommSplit(comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &part, &config);
      if (result != ncclInProgress) BATON_NCCL_CHECK(result);
      NcclRank::await_ready(comm, what, rank_->timeout());
    });
    if (part == nullptr) return nullptr;
    try {
      NcclRank::await_ready(part, what, rank_->timeout());
      int part_rank = -1, part_size = -1;
      BATON_NCCL_CHECK(ncclCommUserRank(part, &part_rank));
      BATON_NCCL_CHECK(ncclCommCount(part, &part_size));
      return make_nccl_rank_communicator(part, rank_->device(), part_rank, part_size, rank_->timeout());
    } catch (...) {
      ncclCommAbort(part);
      throw;
    }
  }

 private:
  std::string describe_next(OpKind kind) const {
    return detail::concat(op_name(kind), " #", next_collective_, " on rank ", rank(), " of ", size(), " (nccl)");
  }

  void check_tensor(const Tensor& tensor, const std::string& what) const {
    BATON_CHECK(tensor.defined(), what, " is an undefined tensor");
    BATON_CHECK(tensor.device() == rank_->device(), what, " is on ", tensor.device().str(),
                ": the nccl communicator of rank ", rank(), " moves tensors of ", rank_->device().str(), " only");
  }

  // Reduces `in` into `out` with `nccl_sum(in, out)`: f32, f64 and integers directly; f16 and bf16
  // through f32 copies (accumulated in f32, rounded once); `mean` scales the sum by 1 / size().
  template <typename Sum>
  void reduce(const Tensor& in, const Tensor& out, ReduceOp op, const Sum& nccl_sum) {
    Context& ctx = rank_->comm_context();
    const double inverse_size = 1.0 / static_cast<double>(size());
    if (!accumulates_in_f32(out.dtype())) {
      nccl_sum(in, out);
      if (op == ReduceOp::mean && out.numel() > 0) kernels::scale(ctx, out, inverse_size, out);
      return;
    }
    const Tensor wide_in = Tensor::empty(in.shape(), DType::f32, ctx.stream());
    const Tensor wide_out = in.data_ptr() == out.data_ptr() ? wide_in : Tensor::empty(out.shape(), DType::f32, ctx);
    if (in.numel() > 0) kernels::cast(ctx, in, wide_in);
    nccl_sum(wide_in, wide_out);
    if (out.numel() > 0) {
      if (op == ReduceOp::mean) kernels::scale(ctx, wide_out, inverse_size, wide_out);
      kernels::cast(ctx, wide_out, out);
    }
  }

  WorkHandle point_to_point(bool sending, const Tensor& tensor, int peer, const Stream& stream) {
    const OpKind kind = sending ? OpKind::send : OpKind::recv;
    const std::string where =
        detail::concat(sending ? " to rank " : " from rank ", peer, " on rank ", rank(), " of ", size(), " (nccl)");
    check_peer(peer, rank(), size(), detail::concat(op_name(kind), where));
    check_tensor(tensor, detail::concat(op_name(kind), where, ": tensor"));
    uint64_t& counter = (sending ? next_send_ : next_recv_)[static_cast<size_t>(peer)];
    const std::string what = detail::concat(op_name(kind), " #", counter++, where);
    return rank_->queue_point_to_point(what, stream, tensor, [tensor, peer, sending](ncclComm_t comm, void* s) {
      const auto count = static_cast<size_t>(tensor.numel());
      if (sending) {
        BATON_NCCL_CHECK(ncclSend(tensor.data_ptr(), count, nccl_type(tensor.dtype()), peer, comm, as_cuda(s)));
      } else {
        BATON_NCCL_CHECK(ncclRecv(tensor.data_ptr(), count, nccl_type(tensor.dtype()), peer, comm, as_cuda(s)));
      }
    });
  }

  const std::shared_ptr<NcclRank> rank_;
  uint64_t next_collective_ = 0;
  std::vector<uint64_t> next_send_, next_recv_;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_rank_communicator(ncclComm_t comm, Device device, int rank, int size,
                                                          std::chrono::milliseconds timeout) {
  return std::make_unique<NcclCommunicator>(std::make_shared<NcclRank>(comm, device, rank, size, timeout));
}

}  // namespace baton::comm
