// The workloads of `baton bench layers` (tools/bench_layers_workload.h): ResNet-50's distinct layers,
// and their tensors filled with random values in the format the context's convolutions write.
#include "tools/bench_layers_workload.h"

#include <string>
#include <utility>

#include "kernels/layout.h"
#include "kernels/random.h"
#include "layers/conv.h"
#include "layers/linear.h"
#include "models/distinct_layers.h"
#include "models/model_registry.h"

namespace baton::cli {
namespace {

Tensor uniform_tensor(Context& ctx, const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape, DType::f32, ctx);
  kernels::uniform(ctx, t, seed, 0, -1.0, 1.0);
  return t;
}

// A random activation (or activation gradient) in the format the context's convolutions write.
Tensor random_activation(Context& ctx, const Shape& shape, uint64_t seed) {
  const bool channels_last = ctx.channels_last() && ctx.device().is_cpu() && shape.rank() == 4;
  return kernels::to_memory_format(ctx, uniform_tensor(ctx, shape, seed),
                                   channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous);
}

}  // namespace

void prepare_workload(Context& ctx, Workload& w) {
  w.inputs = {random_activation(ctx, w.input_shape, 1)};
  const std::vector<Shape> shapes = {w.input_shape};
  uint64_t seed = 2;
  for (const TensorSpec& spec : w.layer->param_specs(shapes)) {
    w.params.push_back(uniform_tensor(ctx, spec.shape, seed++));
    Tensor g = Tensor::empty(spec.shape, DType::f32, ctx);
    kernels::fill(ctx, g, 0.0);
    w.grads.push_back(g);
  }
  for (const TensorSpec& spec : w.layer->buffer_specs(shapes)) {  // BatchNorm's running statistics
    Tensor b = Tensor::empty(spec.shape, spec.has_dtype_override ? spec.dtype_override : DType::f32, ctx);
    b.fill(spec.init.a, ctx.stream());  // constants
    w.buffers.push_back(b);
  }
  w.dy = random_activation(ctx, w.layer->infer_shapes(shapes)[0], seed);
}

namespace {

std::string size_text(const Shape& input) { return " @" + std::to_string(input[-1]); }

// A workload per distinct layer of `type` in ResNet-50 at 224×224 (models/), in forward order.
std::vector<Workload> workloads_of(const Graph& resnet50, std::string_view type, WorkloadKind kind) {
  std::vector<Workload> out;
  for (models::DistinctLayer& d : models::distinct_layers(resnet50, type)) {
    Workload w;
    w.name = d.name;
    w.kind = kind;
    w.count = d.count;
    w.layer = d.layer;
    w.input_shape = d.input_shape;
    w.needs_input_grad = !d.input_is_graph_input;  // the image needs no gradient
    if (const auto* conv = dynamic_cast<const layers::Conv2d*>(d.layer.get()); conv != nullptr) {
      const layers::Conv2dOptions& o = conv->options();
      w.detail = std::to_string(o.kernel_size[0]) + "x" + std::to_string(o.kernel_size[1]) +
                 (o.stride[0] > 1 ? "/2 " : " ") + std::to_string(o.in_channels) + "->" +
                 std::to_string(o.out_channels) + size_text(d.input_shape);
    } else if (const auto* fc = dynamic_cast<const layers::Linear*>(d.layer.get()); fc != nullptr) {
      w.detail =
          "Linear " + std::to_string(fc->options().in_features) + "->" + std::to_string(fc->options().out_features);
      w.note = kLinearNote;
    } else {
      w.detail = "BN " + std::to_string(d.input_shape[1]) + size_text(d.input_shape);
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

std::vector<Workload> make_workloads(int64_t batch) {
  models::ModelOptions options = models::default_options("resnet50");
  options.batch_size = batch;
  options.with_loss = false;
  const Graph resnet50 = models::build_model("resnet50", options);
  std::vector<Workload> out = workloads_of(resnet50, "Conv2d", WorkloadKind::conv);
  for (auto kind : {std::pair{"Linear", WorkloadKind::linear}, std::pair{"BatchNorm2d", WorkloadKind::batch_norm}}) {
    for (Workload& w : workloads_of(resnet50, kind.first, kind.second)) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace baton::cli
