// Layer: the interface every layer implements (runtime/graph knows no concrete layer).
// A layer is a pure function of its inputs, parameters and buffers: it keeps no per-call state, so
// several micro-batches can be in flight through one layer object. What backward needs is
// returned by forward as `saved` tensors, which the executor keeps in a per-micro-batch Tape.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"
#include "runtime/graph/precision.h"

namespace baton {

// How a parameter or buffer is initialised (values drawn with Philox: identical on every device).
struct Initializer {
  enum class Kind { constant, uniform, normal };
  Kind kind = Kind::constant;
  double a = 0;  // constant: the value; uniform: low; normal: mean
  double b = 0;  // uniform: high; normal: standard deviation

  static Initializer constant(double value) { return {Kind::constant, value, 0}; }
  static Initializer uniform(double low, double high) { return {Kind::uniform, low, high}; }
  static Initializer normal(double mean, double stddev) { return {Kind::normal, mean, stddev}; }

  bool operator==(const Initializer&) const = default;
};

// A parameter or buffer of a layer: its name within the layer ("weight", "running_mean"), shape,
// initialiser, and whether weight decay applies (optimisers can exempt biases and BN parameters).
struct TensorSpec {
  std::string name;
  Shape shape;
  Initializer init;
  bool weight_decay = true;
  DType dtype_override = kDefaultDType;  // buffers only: used when `has_dtype_override` (e.g. i64 counters)
  bool has_dtype_override = false;
};

// Estimates for the planner, for given input shapes (batch included) and element type.
struct LayerCost {
  double forward_macs = 0;      // multiply-accumulates of forward
  double forward_flops = 0;     // floating-point operations of forward (2 per MAC plus the rest)
  double backward_flops = 0;    // of backward (input and parameter gradients)
  int64_t output_bytes = 0;     // bytes of the outputs
  int64_t saved_bytes = 0;      // bytes forward keeps for backward (beyond tensors it shares)
  int64_t param_bytes = 0;      // bytes of parameters (gradients take as much again)
  int64_t workspace_bytes = 0;  // scratch memory the implementation asks for
};

enum class Mode { train, eval };

// Buffer updates a layer gathers over the micro-batches of a step and applies once, at the end of
// the step (deferred batch-norm statistics: running statistics from the whole mini-batch). One
// object per node per Executor (Layer::make_deferred_update), used by one thread at a time.
class DeferredUpdate {
 public:
  virtual ~DeferredUpdate() = default;
  // Applies what forward gathered since the last commit to the node's buffers (in the order of
  // buffer_specs()), ordered on ctx's stream, then starts over. Nothing gathered: nothing changes.
  virtual void commit(Context& ctx, std::span<const Tensor> buffers) = 0;
  // Forgets what was gathered (a step that failed).
  virtual void discard() = 0;
};

struct ForwardArgs {
  Context& ctx;
  Mode mode = Mode::train;
  std::span<const Tensor> inputs;
  std::span<const Tensor> params;   // in the order of param_specs()
  std::span<const Tensor> buffers;  // in the order of buffer_specs(); BatchNorm updates them in train mode
  bool update_buffers = true;       // false when a forward is recomputed for backward
  uint64_t seed = 0;                // random layers (Dropout): the Philox key of this call
  // Set (with update_buffers) when the step defers buffer updates: the layer gathers what it would
  // apply to its buffers here instead (the object its make_deferred_update() made).
  DeferredUpdate* deferred = nullptr;
};

struct ForwardResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> saved;  // what backward needs (often views of inputs or outputs: no copies)
};

struct BackwardArgs {
  Context& ctx;
  std::span<const Tensor> output_grads;  // one per output
  std::span<const Tensor> saved;         // as forward returned them
  std::span<const Tensor> params;
  std::span<const Tensor> param_grads;  // accumulate into these: grad += dL/dparam
  std::vector<bool> needs_input_grad;   // per input; no gradient is computed where false
};

class Layer {
 public:
  virtual ~Layer() = default;

  // The registered type name, PyTorch style: "Conv2d", "BatchNorm2d", "Linear".
  virtual std::string_view type() const = 0;
  // The construction parameters; the registry rebuilds an equal layer from type() and config().
  virtual nlohmann::json config() const = 0;

  // Number of inputs the layer takes (-1: any number >= 1, e.g. Add, Concat).
  virtual int num_inputs() const { return 1; }
  virtual int num_outputs() const { return 1; }
  // Output shapes for the given input shapes; throws baton::Error describing a mismatch.
  virtual std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const = 0;
  // Output element types (default: the first input's, for every output).
  virtual std::vector<DType> infer_dtypes(std::span<const DType> inputs) const;
  // Inputs through which no gradient flows (the labels of a loss).
  virtual bool differentiable_input(int /*index*/) const { return true; }

  virtual std::vector<TensorSpec> param_specs(std::span<const Shape> /*inputs*/) const { return {}; }
  virtual std::vector<TensorSpec> buffer_specs(std::span<const Shape> /*inputs*/) const { return {}; }

  // Whether forward and backward take channels-last tensors (inputs, output gradients); the executor
  // gives the others row-major ones.
  virtual bool reads_channels_last() const { return false; }

  virtual ForwardResult forward(const ForwardArgs& args) const = 0;
  // Input gradients (an undefined Tensor where not needed); parameter gradients accumulated.
  virtual std::vector<Tensor> backward(const BackwardArgs& args) const = 0;

  virtual LayerCost cost(std::span<const Shape> inputs, DType dtype) const;

  // For layers whose train-mode forward updates buffers and can defer that to the end of a step
  // (BatchNorm2d): a fresh accumulator. Null (the default): buffers, if any, are updated by each
  // forward as usual.
  virtual std::unique_ptr<DeferredUpdate> make_deferred_update() const { return nullptr; }
};

using LayerPtr = std::shared_ptr<const Layer>;

}  // namespace baton
