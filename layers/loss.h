// Loss layers: SoftmaxCrossEntropy (classification) and MSELoss (regression). Each outputs a scalar
// (shape []) mean loss of dtype f32, or f64 for f64 inputs (kernels::reduction_dtype), and takes the
// incoming gradient of that scalar as a one-element device tensor: backward multiplies by it on the
// device (kernels::scale_by_scalar), never reading it on the host.
#pragma once

#include "layers/options_layer.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

struct SoftmaxCrossEntropyOptions {
  double label_smoothing = 0;  // in [0, 1]: the target is (1 - ε)·onehot + ε / C
};

// Inputs: logits [N, C] (floating) and labels [N] (i32 or i64, each in [0, C)); the labels take no
// gradient. Output: mean over rows of the cross-entropy of softmax(logits), as
// torch.nn.CrossEntropyLoss(label_smoothing=ε). Saves the softmax probabilities [N, C] and the labels
// (a view). Out-of-range labels are a baton::Error naming the first bad row; on CUDA that check
// synchronises the stream once per pass (kernels/loss.h).
class SoftmaxCrossEntropy final : public OptionsLayer<SoftmaxCrossEntropyOptions> {
 public:
  // Throws a baton::Error unless 0 <= label_smoothing <= 1.
  explicit SoftmaxCrossEntropy(SoftmaxCrossEntropyOptions options = {});

  std::string_view type() const override { return "SoftmaxCrossEntropy"; }
  nlohmann::json config() const override;  // {"label_smoothing": ε}
  int num_inputs() const override { return 2; }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<DType> infer_dtypes(std::span<const DType> inputs) const override;
  bool differentiable_input(int index) const override { return index == 0; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

// Inputs: prediction and target of one shape and floating dtype, both differentiable. Output:
// mean((prediction - target)²) over every element, as torch.nn.MSELoss(). The difference is formed in
// the inputs' dtype and saved for backward; the squares are summed in double on the CPU and in float
// (double for f64) on CUDA (kernels/reduce.h).
class MSELoss final : public Layer {
 public:
  std::string_view type() const override { return "MSELoss"; }
  nlohmann::json config() const override { return nlohmann::json::object(); }
  int num_inputs() const override { return 2; }
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<DType> infer_dtypes(std::span<const DType> inputs) const override;
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;
  LayerCost cost(std::span<const Shape> inputs, DType dtype) const override;
};

}  // namespace baton::layers
