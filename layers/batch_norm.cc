// BatchNorm2d over kernels/batch_norm.h.
//
// What forward saves tells backward which statistics were used (BackwardArgs has no mode):
//   batch statistics: {x, stats}, stats [2, C] holding the batch mean (row 0) and invstd (row 1);
//   running statistics (eval mode, freeze_statistics): {x, running_mean, running_var}, views of the
//   buffers (which nothing updates in those modes).
#include "layers/batch_norm.h"

#include "kernels/batch_norm.h"
#include "kernels/batch_norm_statistics.h"
#include "kernels/layout.h"
#include "layers/builtin_layers.h"
#include "runtime/graph/json_config.h"

namespace baton::layers {
namespace {

// Row `r` of a [2, C] tensor as a [C] view.
Tensor row(const Tensor& t, int64_t r) { return t.slice(r, r + 1).reshape(Shape{t.size(1)}); }

// Deferred running statistics: the statistics of each micro-batch (one extra pass over x) merged
// into those of everything seen since the last commit, on the device; commit updates the buffers
// as one forward over all of it would (kernels/batch_norm_statistics.h).
class DeferredStatistics final : public DeferredUpdate {
 public:
  explicit DeferredStatistics(double momentum) : momentum_(momentum) {}

  void add(Context& ctx, const Tensor& x) {
    const Shape c{x.size(1)};
    if (!mean_.defined() || mean_.dtype() != x.dtype() || mean_.device() != x.device() || !(mean_.shape() == c)) {
      BATON_CHECK(count_ == 0, "BatchNorm2d: deferred statistics of one step on different devices or dtypes");
      mean_ = Tensor::empty(c, x.dtype(), ctx);
      var_ = Tensor::empty(c, x.dtype(), ctx);
      batch_mean_ = Tensor::empty(c, x.dtype(), ctx);
      batch_var_ = Tensor::empty(c, x.dtype(), ctx);
    }
    const int64_t batch_count = x.size(0) * x.size(2) * x.size(3);
    kernels::batch_norm_statistics(ctx, x, batch_mean_, batch_var_);
    kernels::batch_norm_merge_statistics(ctx, count_, mean_, var_, batch_count, batch_mean_, batch_var_);
    count_ += batch_count;
  }

  void commit(Context& ctx, std::span<const Tensor> buffers) override {
    if (count_ == 0) return;
    kernels::batch_norm_commit_statistics(ctx, count_, mean_, var_, momentum_, buffers[0], buffers[1], buffers[2]);
    count_ = 0;
  }

  void discard() override { count_ = 0; }

 private:
  double momentum_;
  int64_t count_ = 0;                           // values per channel merged since the last commit
  Tensor mean_, var_, batch_mean_, batch_var_;  // [C]; var biased
};

}  // namespace

BatchNorm2d::BatchNorm2d(const BatchNorm2dOptions& options) : OptionsLayer(options) {
  BATON_CHECK(options.num_features >= 1, "BatchNorm2d: num_features is ", options.num_features,
              ", expected at least 1");
  BATON_CHECK(options.eps > 0.0, "BatchNorm2d: eps is ", options.eps, ", expected a value > 0");
  BATON_CHECK(options.momentum >= 0.0 && options.momentum <= 1.0, "BatchNorm2d: momentum is ", options.momentum,
              ", expected a value in [0, 1]");
  BATON_CHECK(!options.freeze_statistics || options.track_running_stats,
              "BatchNorm2d: freeze_statistics needs track_running_stats (there are no running statistics to freeze)");
}

nlohmann::json BatchNorm2d::config() const {
  return {{"num_features", options().num_features},
          {"eps", options().eps},
          {"momentum", options().momentum},
          {"affine", options().affine},
          {"track_running_stats", options().track_running_stats},
          {"freeze_statistics", options().freeze_statistics}};
}

std::vector<Shape> BatchNorm2d::infer_shapes(std::span<const Shape> inputs) const {
  const Shape& x = inputs[0];
  BATON_CHECK(x.rank() == 4, "BatchNorm2d: input has shape ", x.str(), ", expected 4 dimensions [N, C, H, W]");
  BATON_CHECK(x[1] == options().num_features, "BatchNorm2d: input has shape ", x.str(), " with ", x[1],
              " channels, expected ", options().num_features, " (num_features)");
  return {x};
}

std::vector<TensorSpec> BatchNorm2d::param_specs(std::span<const Shape> /*inputs*/) const {
  if (!options().affine) return {};
  const Shape c{options().num_features};
  return {{.name = "weight", .shape = c, .init = Initializer::constant(1), .weight_decay = false},
          {.name = "bias", .shape = c, .init = Initializer::constant(0), .weight_decay = false}};
}

std::vector<TensorSpec> BatchNorm2d::buffer_specs(std::span<const Shape> /*inputs*/) const {
  if (!options().track_running_stats) return {};
  const Shape c{options().num_features};
  return {{.name = "running_mean", .shape = c, .init = Initializer::constant(0), .weight_decay = false},
          {.name = "running_var", .shape = c, .init = Initializer::constant(1), .weight_decay = false},
          {.name = "num_batches_tracked",
           .shape = Shape{},
           .init = Initializer::constant(0),
           .weight_decay = false,
           .dtype_override = DType::i64,
           .has_dtype_override = true}};
}

ForwardResult BatchNorm2d::forward(const ForwardArgs& args) const {
  const Tensor& x = args.inputs[0];
  infer_shapes(std::span<const Shape>(&x.shape(), 1));
  const Tensor weight = options().affine ? args.params[0] : Tensor();
  const Tensor bias = options().affine ? args.params[1] : Tensor();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), args.ctx.stream(), x.format());
  const bool batch_statistics =
      !options().track_running_stats || (args.mode == Mode::train && !options().freeze_statistics);
  if (!batch_statistics) {
    kernels::batch_norm_forward_eval(args.ctx, x, weight, bias, args.buffers[0], args.buffers[1], options().eps, y);
    return {{y}, {x, args.buffers[0], args.buffers[1]}};
  }
  Tensor stats = Tensor::empty(Shape{2, options().num_features}, x.dtype(), args.ctx);
  const bool update = options().track_running_stats && args.update_buffers && args.deferred == nullptr;
  if (options().track_running_stats && args.update_buffers && args.deferred != nullptr) {
    auto* deferred = dynamic_cast<DeferredStatistics*>(args.deferred);
    BATON_CHECK(deferred != nullptr, "BatchNorm2d: ForwardArgs::deferred is not one make_deferred_update made");
    deferred->add(args.ctx, kernels::to_memory_format(args.ctx, x, MemoryFormat::contiguous));
  }
  kernels::batch_norm_forward_train(args.ctx, x, weight, bias, options().eps, options().momentum, y, row(stats, 0),
                                    row(stats, 1), update ? args.buffers[0] : Tensor(),
                                    update ? args.buffers[1] : Tensor(), update ? args.buffers[2] : Tensor());
  return {{y}, {x, stats}};
}

std::vector<Tensor> BatchNorm2d::backward(const BackwardArgs& args) const {
  const Tensor& x = args.saved[0];
  const Tensor dy = kernels::to_memory_format(args.ctx, args.output_grads[0], x.format());
  const Tensor weight = options().affine ? args.params[0] : Tensor();
  const Tensor weight_grad = options().affine ? args.param_grads[0] : Tensor();
  const Tensor bias_grad = options().affine ? args.param_grads[1] : Tensor();
  const Tensor dx =
      args.needs_input_grad[0] ? Tensor::empty(x.shape(), x.dtype(), args.ctx.stream(), x.format()) : Tensor();
  if (args.saved.size() == 2) {
    const Tensor& stats = args.saved[1];
    kernels::batch_norm_backward_train(args.ctx, x, dy, weight, row(stats, 0), row(stats, 1), options().eps, dx,
                                       weight_grad, bias_grad);
  } else {
    kernels::batch_norm_backward_eval(args.ctx, x, dy, weight, args.saved[1], args.saved[2], options().eps, dx,
                                      weight_grad, bias_grad);
  }
  return {dx};
}

LayerCost BatchNorm2d::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c = Layer::cost(inputs, dtype);
  const auto n = static_cast<double>(inputs[0].numel());
  const auto element_bytes = static_cast<int64_t>(dtype_size(dtype));
  const int64_t channel_bytes = options().num_features * element_bytes;
  const bool batch_statistics = !options().track_running_stats || !options().freeze_statistics;
  if (batch_statistics) {
    // Forward per element: mean (1), variance (3), normalise (3). Backward: Σdy (1), Σdy·x̂ (4),
    // dx (6).
    c.forward_flops = 7 * n;
    c.backward_flops = 11 * n;
    c.saved_bytes = inputs[0].bytes(element_bytes) + 2 * channel_bytes;
  } else {
    // Forward: normalise (3). Backward: dx (1), Σdy (1), Σdy·(x − μ) (3).
    c.forward_flops = 3 * n;
    c.backward_flops = 5 * n;
    c.saved_bytes = inputs[0].bytes(element_bytes);
  }
  c.param_bytes = options().affine ? 2 * channel_bytes : 0;
  // CUDA without affine parameters: ones and zeros for cuDNN's γ and β, and scratch parameter
  // gradients in backward.
  c.workspace_bytes = options().affine ? 0 : 3 * channel_bytes;
  return c;
}

std::unique_ptr<DeferredUpdate> BatchNorm2d::make_deferred_update() const {
  if (!options().track_running_stats || options().freeze_statistics) return nullptr;
  return std::make_unique<DeferredStatistics>(options().momentum);
}

void register_batch_norm_layers(LayerRegistry& registry) {
  registry.add("BatchNorm2d", [](const nlohmann::json& config) {
    const JsonConfig c(config, "BatchNorm2d config",
                       {"num_features", "eps", "momentum", "affine", "track_running_stats", "freeze_statistics"});
    BatchNorm2dOptions o;
    o.num_features = c.get_int("num_features");
    o.eps = c.get_double("eps", o.eps);
    o.momentum = c.get_double("momentum", o.momentum);
    o.affine = c.get_bool("affine", o.affine);
    o.track_running_stats = c.get_bool("track_running_stats", o.track_running_stats);
    o.freeze_statistics = c.get_bool("freeze_statistics", o.freeze_statistics);
    return std::make_unique<BatchNorm2d>(o);
  });
}

}  // namespace baton::layers
