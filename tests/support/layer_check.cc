// Layer gradient check and CUDA-against-CPU check.
#include "tests/support/layer_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "runtime/core/philox.h"
#include "tests/support/test_support.h"

namespace baton::testing {
namespace {

std::vector<Shape> shapes_of(const std::vector<Tensor>& ts) {
  std::vector<Shape> out;
  for (const Tensor& t : ts) out.push_back(t.shape());
  return out;
}

// Buffers from their initialisers (BatchNorm's running variance must stay positive); parameters random.
std::vector<Tensor> make_tensors(const std::vector<TensorSpec>& specs, DType dtype, const Stream& stream, uint64_t seed,
                                 bool from_initializer) {
  std::vector<Tensor> out;
  for (const TensorSpec& spec : specs) {
    const DType d = spec.has_dtype_override ? spec.dtype_override : dtype;
    if (from_initializer && spec.init.kind == Initializer::Kind::constant) {
      Tensor t = Tensor::empty(spec.shape, d, stream);
      t.fill(spec.init.a, stream);
      out.push_back(t);
    } else {
      out.push_back(random_tensor(spec.shape, d, stream, seed++, -1.0, 1.0));
    }
  }
  return out;
}

struct Evaluation {
  std::vector<Tensor> outputs;
  std::vector<Tensor> input_grads;
  std::vector<Tensor> param_grads;
};

class Harness {
 public:
  Harness(const Layer& layer, Context& ctx, std::vector<Tensor> inputs, std::vector<Tensor> params,
          std::vector<Tensor> buffers, std::vector<Tensor> weights, Mode mode, uint64_t seed)
      : layer_(layer),
        ctx_(ctx),
        inputs_(std::move(inputs)),
        params_(std::move(params)),
        buffers_(std::move(buffers)),
        weights_(std::move(weights)),
        mode_(mode),
        seed_(seed) {}

  ForwardResult forward(bool update_buffers) const {
    ForwardArgs args{.ctx = ctx_,
                     .mode = mode_,
                     .inputs = inputs_,
                     .params = params_,
                     .buffers = buffers_,
                     .update_buffers = update_buffers,
                     .seed = seed_};
    return layer_.forward(args);
  }

  // L = sum_o <w_o, out_o>, in double on the host.
  double loss() const {
    const ForwardResult r = forward(false);
    double total = 0;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      if (!is_floating(r.outputs[o].dtype())) continue;
      const std::vector<double> out = to_doubles(r.outputs[o], ctx_.stream());
      const std::vector<double> w = to_doubles(weights_[o], ctx_.stream());
      for (size_t i = 0; i < out.size(); ++i) total += out[i] * w[i];
    }
    return total;
  }

  Evaluation evaluate(bool update_buffers) const {
    ForwardResult r = forward(update_buffers);
    Evaluation e;
    e.outputs = r.outputs;
    for (const Tensor& p : params_) {
      Tensor g = Tensor::empty(p.shape(), p.dtype(), ctx_);
      g.fill(0.0, ctx_.stream());
      e.param_grads.push_back(g);
    }
    std::vector<Tensor> grads;
    for (size_t o = 0; o < r.outputs.size(); ++o) grads.push_back(weights_[o]);
    std::vector<bool> needs(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      needs[i] = layer_.differentiable_input(static_cast<int>(i)) && is_floating(inputs_[i].dtype());
    }
    BackwardArgs args{.ctx = ctx_,
                      .output_grads = grads,
                      .saved = r.saved,
                      .params = params_,
                      .param_grads = e.param_grads,
                      .needs_input_grad = needs};
    e.input_grads = layer_.backward(args);
    return e;
  }

  std::vector<Tensor>& inputs() { return inputs_; }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& buffers() const { return buffers_; }

 private:
  const Layer& layer_;
  Context& ctx_;
  std::vector<Tensor> inputs_, params_, buffers_, weights_;
  Mode mode_;
  uint64_t seed_;
};

std::vector<Tensor> output_weights(const Layer& layer, const std::vector<Tensor>& inputs, DType dtype,
                                   const Stream& stream, uint64_t seed) {
  std::vector<DType> in_dtypes;
  for (const Tensor& t : inputs) in_dtypes.push_back(t.dtype());
  const std::vector<DType> out_dtypes = layer.infer_dtypes(in_dtypes);
  const std::vector<Shape> out_shapes = layer.infer_shapes(shapes_of(inputs));
  std::vector<Tensor> weights;
  for (size_t o = 0; o < out_shapes.size(); ++o) {
    weights.push_back(random_tensor(out_shapes[o], is_floating(out_dtypes[o]) ? dtype : out_dtypes[o], stream,
                                    seed + 1000 + o, -1.0, 1.0));
  }
  return weights;
}

struct TensorReport {
  std::string name;
  int checked = 0, kinks = 0;
  double worst = 0;
  int64_t worst_index = -1;
  double worst_analytic = 0, worst_numeric = 0;
};

}  // namespace

::testing::AssertionResult check_gradients(const Layer& layer, const std::vector<Tensor>& inputs,
                                           const GradCheckOptions& options) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  const std::vector<Shape> shapes = shapes_of(inputs);
  Harness h(layer, ctx, inputs, make_tensors(layer.param_specs(shapes), DType::f64, s, options.seed + 100, false),
            make_tensors(layer.buffer_specs(shapes), DType::f64, s, options.seed + 200, true),
            output_weights(layer, inputs, DType::f64, s, options.seed), options.mode, options.seed);
  const Evaluation analytic = h.evaluate(false);

  std::vector<TensorReport> reports;
  auto check_tensor = [&](Tensor& t, const Tensor& grad, const std::string& name) {
    TensorReport rep{name};
    if (!grad.defined()) {
      rep.checked = -1;
      reports.push_back(rep);
      return;
    }
    const std::vector<double> a = to_doubles(grad, s);
    double* x = t.data<double>();
    const int64_t n = t.numel();
    const int64_t stride = std::max<int64_t>(1, n / options.max_checks_per_tensor);
    for (int64_t i = 0; i < n; i += stride) {
      const int64_t e =
          std::min<int64_t>(n - 1, i + static_cast<int64_t>(philox::uint32_at(options.seed, static_cast<uint64_t>(i)) %
                                                            static_cast<uint32_t>(stride)));
      const double saved = x[e];
      const double l0 = h.loss();
      x[e] = saved + options.step;
      const double lp = h.loss();
      x[e] = saved - options.step;
      const double lm = h.loss();
      x[e] = saved;
      const double numeric = (lp - lm) / (2 * options.step);
      const double right = (lp - l0) / options.step, left = (l0 - lm) / options.step;
      if (std::abs(right - left) > options.kink_threshold * std::max({std::abs(right), std::abs(left), 1.0})) {
        ++rep.kinks;
        continue;
      }
      ++rep.checked;
      const double an = a[static_cast<size_t>(e)];
      const double err = std::abs(an - numeric) / std::max({std::abs(an), std::abs(numeric), 1.0});
      if (err > rep.worst || rep.worst_index < 0) {
        rep.worst = err;
        rep.worst_index = e;
        rep.worst_analytic = an;
        rep.worst_numeric = numeric;
      }
    }
    reports.push_back(rep);
  };
  for (size_t i = 0; i < h.inputs().size(); ++i) {
    if (!is_floating(h.inputs()[i].dtype()) || !layer.differentiable_input(static_cast<int>(i))) continue;
    check_tensor(h.inputs()[i], analytic.input_grads.size() > i ? analytic.input_grads[i] : Tensor(),
                 "input " + std::to_string(i));
  }
  const std::vector<TensorSpec> specs = layer.param_specs(shapes);
  for (size_t p = 0; p < h.params().size(); ++p) check_tensor(h.params()[p], analytic.param_grads[p], specs[p].name);

  std::ostringstream msg;
  msg.precision(10);
  bool ok = true;
  for (const TensorReport& r : reports) {
    if (r.checked < 0) {
      ok = false;
      msg << "\n  " << r.name << ": backward returned no gradient";
      continue;
    }
    const bool bad = r.worst > options.tolerance || r.checked < r.kinks || r.checked == 0;
    ok = ok && !bad;
    msg << "\n  " << r.name << ": " << r.checked << " checked, " << r.kinks << " kinks skipped, worst error " << r.worst
        << " at element " << r.worst_index << " (analytic " << r.worst_analytic << ", numeric " << r.worst_numeric
        << ")" << (bad ? "  <-- FAIL" : "");
  }
  if (reports.empty()) return ::testing::AssertionFailure() << layer.type() << ": nothing to check";
  if (ok) return ::testing::AssertionSuccess() << layer.type() << " gradients:" << msg.str();
  return ::testing::AssertionFailure() << layer.type() << " gradient check failed (tolerance " << options.tolerance
                                       << "):" << msg.str();
}

::testing::AssertionResult check_cuda_matches_cpu(const Layer& layer, const std::vector<Tensor>& inputs,
                                                  const DeviceCheckOptions& options) {
  Context cpu(Device::cpu());
  Context gpu(Device::cuda(0));
  const std::vector<Shape> shapes = shapes_of(inputs);
  DType dtype = DType::f32;
  for (const Tensor& t : inputs) {
    if (is_floating(t.dtype())) dtype = t.dtype();
  }
  const std::vector<Tensor> params =
      make_tensors(layer.param_specs(shapes), dtype, cpu.stream(), options.seed + 100, false);
  const std::vector<Tensor> buffers =
      make_tensors(layer.buffer_specs(shapes), dtype, cpu.stream(), options.seed + 200, true);
  const std::vector<Tensor> weights = output_weights(layer, inputs, dtype, cpu.stream(), options.seed);
  auto to_gpu = [&](const std::vector<Tensor>& ts) {
    std::vector<Tensor> out;
    for (const Tensor& t : ts) out.push_back(t.to(Device::cuda(0), gpu.stream()));
    return out;
  };
  auto to_cpu_copy = [&](const std::vector<Tensor>& ts) {
    std::vector<Tensor> out;
    for (const Tensor& t : ts) out.push_back(t.to(Device::cpu(), cpu.stream()));
    return out;
  };
  Harness hc(layer, cpu, to_cpu_copy(inputs), to_cpu_copy(params), to_cpu_copy(buffers), weights, options.mode,
             options.seed);
  Harness hg(layer, gpu, to_gpu(inputs), to_gpu(params), to_gpu(buffers), to_gpu(weights), options.mode, options.seed);
  const Evaluation ec = hc.evaluate(true);
  const Evaluation eg = hg.evaluate(true);
  gpu.synchronize();

  auto compare = [&](const std::vector<Tensor>& c, const std::vector<Tensor>& g,
                     const std::string& what) -> ::testing::AssertionResult {
    if (c.size() != g.size()) return ::testing::AssertionFailure() << what << ": counts differ";
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i].defined() != g[i].defined()) {
        return ::testing::AssertionFailure() << what << " " << i << ": defined on one device only";
      }
      if (!c[i].defined()) continue;
      ::testing::AssertionResult r =
          all_close(to_doubles(g[i], gpu.stream()), to_doubles(c[i], cpu.stream()), options.rtol, options.atol);
      if (!r) return ::testing::AssertionFailure() << layer.type() << " " << what << " " << i << ": " << r.message();
    }
    return ::testing::AssertionSuccess();
  };
  for (auto r :
       {compare(ec.outputs, eg.outputs, "output"), compare(ec.input_grads, eg.input_grads, "input grad"),
        compare(ec.param_grads, eg.param_grads, "param grad"), compare(hc.buffers(), hg.buffers(), "buffer")}) {
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace baton::testing
