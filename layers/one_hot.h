// OneHot: class indices (i32 or i64, any shape) to one-hot rows of `classes` values in a floating
// dtype — the input of a token model, where OneHot followed by Linear is an embedding lookup.
#pragma once

#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/graph/layer.h"

namespace baton::layers {

struct OneHotOptions {
  int64_t classes = 2;       // >= 1
  DType dtype = DType::f32;  // of the output: f32, f64, f16 or bf16
};

// y[..., c] = (x[...] == c): shape x.shape + [classes]. Saves nothing; the input has no gradient.
class OneHot final : public Layer {
 public:
  // Throws a baton::Error unless classes >= 1 and dtype is floating.
  explicit OneHot(OneHotOptions options);
  const OneHotOptions& options() const { return options_; }

  std::string_view type() const override { return "OneHot"; }
  nlohmann::json config() const override;  // {"classes": C, "dtype": "f32"}
  std::vector<Shape> infer_shapes(std::span<const Shape> inputs) const override;
  std::vector<DType> infer_dtypes(std::span<const DType> inputs) const override;
  bool differentiable_input(int /*index*/) const override { return false; }
  ForwardResult forward(const ForwardArgs& args) const override;
  std::vector<Tensor> backward(const BackwardArgs& args) const override;

 private:
  OneHotOptions options_;
};

}  // namespace baton::layers
