// Pointwise activation layers: ReLU, ReLU6, Sigmoid and Tanh. One input, an output of its shape and
// dtype, no options, no parameters. Each saves one tensor for backward, whichever PyTorch's
// backward formula reads: the output for ReLU, Sigmoid and Tanh, the input for ReLU6.
#pragma once

#include "runtime/graph/layer.h"

namespace baton::layers {

// What the pointwise activations share: the config (none), the shape rule (the input's shape) and
// forward / backward / cost over the ops and per-element FLOP counts each one names.
class PointwiseActivation : public Layer {
 public:
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  bool reads_channels_last() const override { return true; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;

 protected:
  struct Ops {
    void (*forward)(Context& ctx, const Tensor& x, const Tensor& out);
    // dx from dy and the saved tensor: the input when saves_input, else the output.
    void (*backward)(Context& ctx, const Tensor& saved, const Tensor& dy, const Tensor& dx);
    bool saves_input;
    double forward_flops, backward_flops;  // per element
  };
  explicit PointwiseActivation(const Ops& ops) : ops_(ops) {}

 private:
  Ops ops_;
};

// y = max(x, 0). Saves its output (dx = dy where y > 0). A compare per element each way.
class ReLU final : public PointwiseActivation {
 public:
  ReLU();
  std::string_view type() const override { return "ReLU"; }
};

// y = min(max(x, 0), 6). Saves its input (dx = dy where 0 < x < 6). Two compares each way.
class ReLU6 final : public PointwiseActivation {
 public:
  ReLU6();
  std::string_view type() const override { return "ReLU6"; }
};

// y = 1 / (1 + e^-x). Saves its output (dx = dy · y(1 - y)). Negate, exp, add and divide forward;
// a subtract and two multiplies backward.
class Sigmoid final : public PointwiseActivation {
 public:
  Sigmoid();
  std::string_view type() const override { return "Sigmoid"; }
};

// y = tanh(x). Saves its output (dx = dy · (1 - y)(1 + y)). Counted as the four operations of its
// exponential form forward; two adds and two multiplies backward.
class Tanh final : public PointwiseActivation {
 public:
  Tanh();
  std::string_view type() const override { return "Tanh"; }
};

}  // namespace baton::layers
