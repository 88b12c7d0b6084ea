// Structural layers over kernels/elementwise.h (Add) and kernels/concat.h (Concat); Flatten and
// Identity only make views.
#include "layers/structural.h"

#include <string>
#include <vector>

#include "kernels/concat.h"
#include "kernels/elementwise.h"
#include "kernels/layout.h"
#include "layers/builtin_layers.h"
#include "layers/layer_support.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {
namespace {

// Every input has input 0's dtype.
std::vector<DType> same_dtypes(std::string_view layer, std::span<const DType> inputs) {
  BATON_CHECK(!inputs.empty(), layer, ": got no inputs");
  for (size_t i = 1; i < inputs.size(); ++i) {
    BATON_CHECK(inputs[i] == inputs[0], layer, ": input ", i, " has dtype ", dtype_name(inputs[i]), ", expected ",
                dtype_name(inputs[0]), " (the dtype of input 0)");
  }
  return {inputs[0]};
}

// "[2, *, 5]": a shape with dimension 1 left open, for messages.
std::string shape_outside_dim1(const Shape& shape) {
  std::string s = "[";
  for (int d = 0; d < shape.rank(); ++d) {
    s += (d == 0 ? "" : ", ") + (d == 1 ? std::string("*") : std::to_string(shape[d]));
  }
  return s + "]";
}

// One gradient per input: the output gradient itself where needed.
std::vector<Tensor> pass_through(const BackwardArgs& args, const Tensor& grad) {
  std::vector<Tensor> grads;
  for (bool needed : args.needs_input_grad) grads.push_back(needed ? grad : Tensor());
  return grads;
}

}  // namespace

// ---- Add ----

std::vector<Shape> Add::infer_shapes(std::span<const Shape> inputs) const {
  check_min_input_count(type(), inputs, 2);
  for (size_t i = 1; i < inputs.size(); ++i) {
    BATON_CHECK(inputs[i] == inputs[0], "Add: input ", i, " has shape ", inputs[i].str(), ", expected ",
                inputs[0].str(), " (the shape of input 0)");
  }
  return {inputs[0]};
}

std::vector<DType> Add::infer_dtypes(std::span<const DType> inputs) const { return same_dtypes(type(), inputs); }

ForwardResult Add::forward(const ForwardArgs& args) const {
  infer_shapes(shapes_of(args.inputs));
  const std::span<const Tensor> x = args.inputs;
  const MemoryFormat format = x[0].format();  // the others follow the first input's format
  Tensor y = Tensor::empty(x[0].shape(), x[0].dtype(), args.ctx.stream(), format);
  kernels::add(args.ctx, x[0], kernels::to_memory_format(args.ctx, x[1], format), y);
  for (size_t i = 2; i < x.size(); ++i) kernels::add(args.ctx, y, kernels::to_memory_format(args.ctx, x[i], format), y);
  return {{y}, {}};
}

std::vector<Tensor> Add::backward(const BackwardArgs& args) const { return pass_through(args, args.output_grads[0]); }

// n - 1 additions per element forward; backward passes the gradient on.
LayerCost Add::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  c.forward_flops = static_cast<double>(inputs.size() - 1) * static_cast<double>(inputs[0].numel());
  return c;
}

// ---- Concat ----

Concat::Concat(ConcatOptions options) : OptionsLayer(options) {
  BATON_CHECK(options.dim == 1, "Concat: dim is ", options.dim,
              ", but only dim = 1 (the channels of [N, C, ...] inputs) is supported");
}

nlohmann::json Concat::config() const { return {{"dim", options().dim}}; }

std::vector<Shape> Concat::infer_shapes(std::span<const Shape> inputs) const {
  check_min_input_count(type(), inputs, 2);
  const Shape& first = inputs[0];
  BATON_CHECK(first.rank() >= 2, "Concat: input 0 has shape ", first.str(),
              ", expected at least 2 dimensions ([N, C, ...])");
  std::vector<int64_t> dims = first.dims();
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape& s = inputs[i];
    bool same = s.rank() == first.rank();
    for (int d = 0; same && d < first.rank(); ++d) same = d == 1 || s[d] == first[d];
    BATON_CHECK(same, "Concat: input ", i, " has shape ", s.str(), ", expected ", shape_outside_dim1(first),
                " (inputs may differ only in dimension 1; input 0 has shape ", first.str(), ")");
    dims[1] += s[1];
  }
  return {Shape(std::move(dims))};
}

std::vector<DType> Concat::infer_dtypes(std::span<const DType> inputs) const { return same_dtypes(type(), inputs); }

ForwardResult Concat::forward(const ForwardArgs& args) const {
  const Shape out_shape = infer_shapes(shapes_of(args.inputs))[0];
  Tensor y = Tensor::empty(out_shape, args.inputs[0].dtype(), args.ctx);
  kernels::concat_channels(args.ctx, args.inputs, y);
  std::vector<int64_t> channels;
  for (const Tensor& x : args.inputs) channels.push_back(x.size(1));
  return {{y}, {host_record(channels)}};
}

std::vector<Tensor> Concat::backward(const BackwardArgs& args) const {
  const Tensor& dy = args.output_grads[0];
  const std::vector<int64_t> channels = read_host_record(args.saved[0]);
  std::vector<Tensor> grads;
  int64_t begin = 0;
  for (size_t i = 0; i < channels.size(); ++i) {
    Tensor dx;
    if (args.needs_input_grad[i]) {
      std::vector<int64_t> dims = dy.shape().dims();
      dims[1] = channels[i];
      dx = Tensor::empty(Shape(std::move(dims)), dy.dtype(), args.ctx);
      kernels::slice_channels(args.ctx, dy, begin, dx);
    }
    grads.push_back(dx);
    begin += channels[i];
  }
  return grads;
}

// ---- Flatten ----

Flatten::Flatten(FlattenOptions options) : OptionsLayer(options) {}

nlohmann::json Flatten::config() const { return {{"start_dim", options().start_dim}, {"end_dim", options().end_dim}}; }

std::vector<Shape> Flatten::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 1);
  const Shape& in = inputs[0];
  const int64_t rank = in.rank() == 0 ? 1 : in.rank();
  auto normalise = [&](int64_t dim, const char* name) {
    BATON_CHECK(dim >= -rank && dim < rank, "Flatten: ", name, " is ", dim, ", out of range for an input of shape ",
                in.str(), " (expected a dimension in [", -rank, ", ", rank - 1, "])");
    return dim < 0 ? dim + rank : dim;
  };
  const int64_t start = normalise(options().start_dim, "start_dim"), end = normalise(options().end_dim, "end_dim");
  BATON_CHECK(start <= end, "Flatten: start_dim (", options().start_dim, ") comes after end_dim (", options().end_dim,
              ") for an input of shape ", in.str());
  if (in.rank() == 0) return {Shape{1}};
  std::vector<int64_t> dims(in.dims().begin(), in.dims().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= in.dims()[static_cast<size_t>(d)];
  dims.push_back(merged);
  dims.insert(dims.end(), in.dims().begin() + end + 1, in.dims().end());
  return {Shape(std::move(dims))};
}

ForwardResult Flatten::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  return {{x.reshape(infer_shapes({&x.shape(), 1})[0])}, {host_record(x.shape().dims())}};
}

std::vector<Tensor> Flatten::backward(const BackwardArgs& args) const {
  if (!args.needs_input_grad[0]) return {Tensor()};
  return {args.output_grads[0].reshape(Shape(read_host_record(args.saved[0])))};
}

// ---- Identity ----

std::vector<Shape> Identity::infer_shapes(std::span<const Shape> inputs) const {
  check_input_count(type(), inputs, 1);
  return {inputs[0]};
}

ForwardResult Identity::forward(const ForwardArgs& args) const { return {{args.inputs[0]}, {}}; }

std::vector<Tensor> Identity::backward(const BackwardArgs& args) const {
  return pass_through(args, args.output_grads[0]);
}

// ---- registration ----

void register_structural_layers(LayerRegistry& registry) {
  registry.add("Add", [](const nlohmann::json& config) {
    JsonConfig(config, "Add config", {});
    return std::make_unique<Add>();
  });
  registry.add("Concat", [](const nlohmann::json& config) {
    const JsonConfig c(config, "Concat config", {"dim"});
    return std::make_unique<Concat>(ConcatOptions{.dim = c.get_int("dim", ConcatOptions{}.dim)});
  });
  registry.add("Flatten", [](const nlohmann::json& config) {
    const JsonConfig c(config, "Flatten config", {"start_dim", "end_dim"});
    const FlattenOptions defaults;
    return std::make_unique<Flatten>(FlattenOptions{.start_dim = c.get_int("start_dim", defaults.start_dim),
                                                    .end_dim = c.get_int("end_dim", defaults.end_dim)});
  });
  registry.add("Identity", [](const nlohmann::json& config) {
    JsonConfig(config, "Identity config", {});
    return std::make_unique<Identity>();
  });
}

}  // namespace baton::layers
