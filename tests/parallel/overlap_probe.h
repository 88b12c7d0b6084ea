// A deterministic probe of the overlap of the gradient all-reduce with backward: communicators that
// record the work of every all-reduce they issue, and an identity layer whose backward — the last of
// the step when it follows the graph's input — returns only once its replica's first all-reduce has
// completed. If buckets were reduced only after backward, that backward would wait in vain and fail.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "layers/builtin_layers.h"
#include "layers/graph_builder.h"
#include "parallel/comm/communicator.h"
#include "runtime/core/error.h"

namespace baton::parallel::testing {

// The all-reduces issued by each rank (index: rank), in issue order.
struct IssuedAllReduces {
  std::mutex mutex;
  std::vector<std::vector<comm::WorkHandle>> by_rank;

  comm::WorkHandle first(int rank) {
    std::lock_guard lock(mutex);
    const auto r = static_cast<size_t>(rank);
    return r < by_rank.size() && !by_rank[r].empty() ? by_rank[r].front() : nullptr;
  }
};

class RecordingCommunicator final : public comm::Communicator {
 public:
  RecordingCommunicator(std::unique_ptr<comm::Communicator> inner, std::shared_ptr<IssuedAllReduces> issued)
      : inner_(std::move(inner)), issued_(std::move(issued)) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string_view backend() const override { return inner_->backend(); }
  void set_timeout(std::chrono::milliseconds timeout) override { inner_->set_timeout(timeout); }
  comm::WorkHandle all_reduce(const Tensor& buffer, comm::ReduceOp op, const Stream& stream) override {
    comm::WorkHandle work = inner_->all_reduce(buffer, op, stream);
    std::lock_guard lock(issued_->mutex);
    issued_->by_rank.resize(std::max(issued_->by_rank.size(), static_cast<size_t>(rank()) + 1));
    issued_->by_rank[static_cast<size_t>(rank())].push_back(work);
    return work;
  }
  comm::WorkHandle broadcast(const Tensor& buffer, int root, const Stream& stream) override {
    return inner_->broadcast(buffer, root, stream);
  }
  comm::WorkHandle all_gather(const Tensor& input, const Tensor& output, const Stream& stream) override {
    return inner_->all_gather(input, output, stream);
  }
  comm::WorkHandle reduce_scatter(const Tensor& input, const Tensor& output, comm::ReduceOp op,
                                  const Stream& stream) override {
    return inner_->reduce_scatter(input, output, op, stream);
  }
  comm::WorkHandle send(const Tensor& tensor, int peer, const Stream& stream) override {
    return inner_->send(tensor, peer, stream);
  }
  comm::WorkHandle recv(const Tensor& tensor, int peer, const Stream& stream) override {
    return inner_->recv(tensor, peer, stream);
  }
  void barrier() override { inner_->barrier(); }
  std::unique_ptr<comm::Communicator> split(int color, int key) override { return inner_->split(color, key); }

 private:
  std::unique_ptr<comm::Communicator> inner_;
  std::shared_ptr<IssuedAllReduces> issued_;
};

// Identity; its backward waits (at most 10 s) for the first all-reduce of the replica on cpu:r
// (r = the context's device index) to complete.
class AwaitFirstAllReduce final : public Layer {
 public:
  explicit AwaitFirstAllReduce(std::shared_ptr<IssuedAllReduces> issued) : issued_(std::move(issued)) {}
  std::string_view type() const override { return "AwaitFirstAllReduce"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override { return {inputs[0]}; }
  ForwardResult forward(const ForwardArgs& args) const override { return {{args.inputs[0]}, {}}; }
  std::vector<Tensor> backward(const BackwardArgs& args) const override {
    const int rank = args.ctx.device().index();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      const comm::WorkHandle first = issued_->first(rank);
      if (first && first->done()) break;
      BATON_CHECK(std::chrono::steady_clock::now() < deadline, "replica ", rank,
                  ": the first bucket's all-reduce did not complete while backward was running");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return {args.output_grads[0]};
  }

 private:
  std::shared_ptr<IssuedAllReduces> issued_;
};

}  // namespace baton::parallel::testing
