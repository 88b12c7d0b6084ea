// PendingLoss: a training step's loss on its way to the host. The step's loss scalars (one, or one
// per micro-batch) and its context's deferred device checks are copied asynchronously into pinned
// memory with an event after them, so issuing a step never waits for the GPU; value() waits for
// that event only. LossReadback (one per engine) issues the copies and reuses the buffers and events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"

namespace baton {

namespace detail {
struct LossSlot;
}

class PendingLoss {
 public:
  PendingLoss() = default;             // no loss: valid() is false
  explicit PendingLoss(double value);  // already on the host
  ~PendingLoss();
  PendingLoss(PendingLoss&&) noexcept;
  PendingLoss& operator=(PendingLoss&&) noexcept;
  PendingLoss(const PendingLoss&) = delete;
  PendingLoss& operator=(const PendingLoss&) = delete;

  bool valid() const { return slot_ != nullptr || value_.has_value() || error_ != nullptr; }
  // Waits for the copies, throws the failure the step's deferred device checks recorded (the op's
  // own error, kernels/deferred_checks.h), and returns the loss: the sum of weight_i * loss_i over
  // the scalars in order, in double. Later calls return the same value or throw the same error.
  double value();
  // value() then also resolves `others` (in order) and throws the first failure among them: a
  // data-parallel step's loss is one replica's, but every replica's deferred checks count.
  void also_resolve(std::vector<PendingLoss> others);
  // value() becomes the mean of this loss and `others` (resolved in order, the first failure
  // thrown): the hybrid's groups each read the mean loss of an equal share of the batch.
  void average_with(std::vector<PendingLoss> others);
  // value() becomes the sum of this loss and `others` (resolved in order, the first failure thrown):
  // the replicas of a pipeline's loss stage each read their own micro-batches' weighted losses.
  void sum_with(std::vector<PendingLoss> others);

 private:
  friend class LossReadback;
  double resolve_slot();
  std::vector<PendingLoss> others_;
  std::shared_ptr<detail::LossSlot> slot_;
  std::optional<double> value_;
  std::exception_ptr error_;
  enum class Combine { none, average, sum };
  Combine combine_ = Combine::none;  // what value() makes of others_ (none: only resolves them)
};

class LossReadback {
 public:
  LossReadback();
  ~LossReadback();
  LossReadback(const LossReadback&) = delete;
  LossReadback& operator=(const LossReadback&) = delete;

  // The loss sum_i weights[i] * losses[i]: `losses` are scalars (f32 or f64) on ctx's device, written
  // on its stream. On a CUDA device the copies of the losses and of ctx's deferred-check record
  // (which is reset) are issued on ctx's stream and nothing waits; on a CPU device the value is
  // read at once. A buffer and an event are reused once the PendingLoss holding them is resolved or
  // gone. `describe_tag` turns the Context::check_tag() of a failed check into a line of context
  // for its error ("in pipeline stage 3, micro-batch 2").
  using TagDescription = std::function<std::string(int64_t tag)>;
  PendingLoss read(Context& ctx, const std::vector<Tensor>& losses, const std::vector<double>& weights,
                   TagDescription describe_tag = {});

 private:
  std::shared_ptr<detail::LossSlot> free_slot(Device device, size_t count);
  std::vector<std::shared_ptr<detail::LossSlot>> slots_;
};

}  // namespace baton
