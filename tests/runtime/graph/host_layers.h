// Small CPU-only float64 layers written with plain loops, for testing the graph machinery
// independently of the real layers: an affine map with weight and bias, a sum of squares loss,
// a two-input add whose backward hands the same tensor to both inputs, and a shift that saves nothing.
#pragma once

#include <string>
#include <vector>

#include "runtime/graph/graph.h"
#include "runtime/graph/layer.h"
#include "runtime/graph/layer_registry.h"

namespace baton::testing {

// y[n, f] = x[n, f] * weight[f] + bias[f].
class HostAffine final : public Layer {
 public:
  std::string_view type() const override { return "HostAffine"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> in) const override;
  std::vector<TensorSpec> param_specs(std::span<const Shape> in) const override;
  ForwardResult forward(const ForwardArgs& a) const override;
  std::vector<Tensor> backward(const BackwardArgs& a) const override;
};

// L = sum of x^2 (a scalar).
class HostSquareSum final : public Layer {
 public:
  std::string_view type() const override { return "HostSquareSum"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> in) const override;
  ForwardResult forward(const ForwardArgs& a) const override;
  std::vector<Tensor> backward(const BackwardArgs& a) const override;
};

// y = a + b; backward returns the incoming gradient tensor itself for both inputs.
class HostAdd final : public Layer {
 public:
  std::string_view type() const override { return "HostAdd"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  int num_inputs() const override { return 2; }
  std::vector<Shape> infer_shapes(std::span<const Shape> in) const override;
  ForwardResult forward(const ForwardArgs& a) const override;
  std::vector<Tensor> backward(const BackwardArgs& a) const override;
};

// y = x + 1; saves nothing.
class HostShift final : public Layer {
 public:
  std::string_view type() const override { return "HostShift"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  std::vector<Shape> infer_shapes(std::span<const Shape> in) const override { return {in[0]}; }
  ForwardResult forward(const ForwardArgs& a) const override;
  std::vector<Tensor> backward(const BackwardArgs& a) const override;
};

// x [batch, 3] -> a1 -> shift -> a2 -> sum(a2, a1) -> a3 -> loss (sum of squares): a residual
// branch (a1 is read twice), parameters in three nodes, one scalar output.
Graph residual_host_graph(int64_t batch);

// x [rows, features] -> a HostAffine node per name in `affines`, in a chain -> loss (sum of squares).
Graph host_affine_chain(const Shape& x_shape, const std::vector<std::string>& affines);

// A registry holding the four host layers.
const LayerRegistry& host_layer_registry();

}  // namespace baton::testing
