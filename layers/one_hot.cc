// The OneHot layer over kernels::one_hot, and its registration.
#include "layers/one_hot.h"

#include <string>

#include "kernels/one_hot.h"
#include "layers/builtin_layers.h"
#include "layers/layer_support.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {

OneHot::OneHot(OneHotOptions options) : options_(options) {
  BATON_CHECK(options_.classes >= 1, "OneHot: classes is ", options_.classes, ", expected at least 1");
  BATON_CHECK(is_floating(options_.dtype), "OneHot: dtype is ", dtype_name(options_.dtype),
              ", expected a floating dtype (f32, f64, f16 or bf16)");
}

nlohmann::json OneHot::config() const {
  return {{"classes", options_.classes}, {"dtype", std::string(dtype_name(options_.dtype))}};
}

std::vector<Shape> OneHot::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 1);
  std::vector<int64_t> dims = inputs[0].dims();
  dims.push_back(options_.classes);
  return {Shape(std::move(dims))};
}

std::vector<DType> OneHot::infer_dtypes(std::span<const DType> inputs) const {
  BATON_CHECK(inputs.size() == 1, "OneHot: got ", inputs.size(), " input dtype(s), expected 1");
  BATON_CHECK(inputs[0] == DType::i32 || inputs[0] == DType::i64, "OneHot: the input has dtype ", dtype_name(inputs[0]),
              ", expected i32 or i64 class indices");
  return {options_.dtype};
}

ForwardResult OneHot::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  infer_dtypes(dtypes_of(args.inputs));
  Tensor y = Tensor::empty(infer_shapes(std::span(&x.shape(), 1))[0], options_.dtype, args.ctx);
  kernels::one_hot(args.ctx, x, y);
  return {{y}, {}};
}

std::vector<Tensor> OneHot::backward(const BackwardArgs& /*args*/) const { return {Tensor()}; }

void register_one_hot_layers(LayerRegistry& registry) {
  registry.add("OneHot", [](const nlohmann::json& config) {
    const JsonConfig c(config, "OneHot config", {"classes", "dtype"});
    return std::make_unique<OneHot>(
        OneHotOptions{.classes = c.get_int("classes"), .dtype = parse_dtype(c.get_string("dtype", "f32"))});
  });
}

}  // namespace baton::layers
