// Small layers computed on the host (affine, square sum, add, shift) for graph and executor tests.
#include "tests/runtime/graph/host_layers.h"

#include "runtime/core/error.h"

namespace baton::testing {
namespace {

Tensor like(const Tensor& t, Context& ctx) { return Tensor::empty(t.shape(), t.dtype(), ctx); }

}  // namespace

std::vector<Shape> HostAffine::infer_shapes(std::span<const Shape> in) const {
  BATON_CHECK(in[0].rank() == 2, "HostAffine expects [N, F], got ", in[0].str());
  return {in[0]};
}

std::vector<TensorSpec> HostAffine::param_specs(std::span<const Shape> in) const {
  return {{"weight", Shape{in[0][1]}, Initializer::uniform(-1, 1)},
          {"bias", Shape{in[0][1]}, Initializer::uniform(-0.5, 0.5), /*weight_decay=*/false}};
}

ForwardResult HostAffine::forward(const ForwardArgs& a) const {
  const Tensor& x = a.inputs[0];
  Tensor y = like(x, a.ctx);
  const int64_t n = x.size(0), f = x.size(1);
  const double *xp = x.data<double>(), *w = a.params[0].data<double>(), *b = a.params[1].data<double>();
  double* yp = y.data<double>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < f; ++j) yp[i * f + j] = xp[i * f + j] * w[j] + b[j];
  }
  return {{y}, {x}};
}

std::vector<Tensor> HostAffine::backward(const BackwardArgs& a) const {
  const Tensor& x = a.saved[0];
  const Tensor& dy = a.output_grads[0];
  const int64_t n = x.size(0), f = x.size(1);
  const double *xp = x.data<double>(), *g = dy.data<double>(), *w = a.params[0].data<double>();
  double *dw = a.param_grads[0].data<double>(), *db = a.param_grads[1].data<double>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < f; ++j) {
      dw[j] += g[i * f + j] * xp[i * f + j];
      db[j] += g[i * f + j];
    }
  }
  if (!a.needs_input_grad[0]) return {Tensor()};
  Tensor dx = like(x, a.ctx);
  double* d = dx.data<double>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < f; ++j) d[i * f + j] = g[i * f + j] * w[j];
  }
  return {dx};
}

std::vector<Shape> HostSquareSum::infer_shapes(std::span<const Shape>) const { return {Shape{}}; }

ForwardResult HostSquareSum::forward(const ForwardArgs& a) const {
  const Tensor& x = a.inputs[0];
  Tensor y = Tensor::empty(Shape{}, x.dtype(), a.ctx);
  double total = 0;
  for (int64_t i = 0; i < x.numel(); ++i) total += x.data<double>()[i] * x.data<double>()[i];
  y.data<double>()[0] = total;
  return {{y}, {x}};
}

std::vector<Tensor> HostSquareSum::backward(const BackwardArgs& a) const {
  const Tensor& x = a.saved[0];
  const double g = a.output_grads[0].data<double>()[0];
  Tensor dx = like(x, a.ctx);
  for (int64_t i = 0; i < x.numel(); ++i) dx.data<double>()[i] = 2 * x.data<double>()[i] * g;
  return {dx};
}

std::vector<Shape> HostAdd::infer_shapes(std::span<const Shape> in) const {
  BATON_CHECK(in[0] == in[1], "HostAdd inputs differ: ", in[0].str(), " vs ", in[1].str());
  return {in[0]};
}

ForwardResult HostAdd::forward(const ForwardArgs& a) const {
  Tensor y = like(a.inputs[0], a.ctx);
  for (int64_t i = 0; i < y.numel(); ++i) {
    y.data<double>()[i] = a.inputs[0].data<double>()[i] + a.inputs[1].data<double>()[i];
  }
  return {{y}, {}};
}

std::vector<Tensor> HostAdd::backward(const BackwardArgs& a) const { return {a.output_grads[0], a.output_grads[0]}; }

ForwardResult HostShift::forward(const ForwardArgs& a) const {
  Tensor y = like(a.inputs[0], a.ctx);
  for (int64_t i = 0; i < y.numel(); ++i) y.data<double>()[i] = a.inputs[0].data<double>()[i] + 1.0;
  return {{y}, {}};
}

std::vector<Tensor> HostShift::backward(const BackwardArgs& a) const { return {a.output_grads[0]}; }

Graph residual_host_graph(int64_t batch) {
  Graph g;
  const ValueId x = g.add_input("x", Shape{batch, 3}, DType::f64);
  const ValueId a1 = g.add_node("a1", std::make_shared<HostAffine>(), {x})[0];
  const ValueId s = g.add_node("shift", std::make_shared<HostShift>(), {a1})[0];
  const ValueId a2 = g.add_node("a2", std::make_shared<HostAffine>(), {s})[0];
  const ValueId sum = g.add_node("sum", std::make_shared<HostAdd>(), {a2, a1})[0];
  const ValueId a3 = g.add_node("a3", std::make_shared<HostAffine>(), {sum})[0];
  g.mark_output(g.add_node("loss", std::make_shared<HostSquareSum>(), {a3})[0]);
  return g;
}

Graph host_affine_chain(const Shape& x_shape, const std::vector<std::string>& affines) {
  Graph g;
  ValueId v = g.add_input("x", x_shape, DType::f64);
  for (const std::string& name : affines) v = g.add_node(name, std::make_shared<HostAffine>(), {v})[0];
  g.mark_output(g.add_node("loss", std::make_shared<HostSquareSum>(), {v})[0]);
  return g;
}

const LayerRegistry& host_layer_registry() {
  static const LayerRegistry registry = [] {
    LayerRegistry r;
    r.add("HostAffine", [](const nlohmann::json&) { return std::make_unique<HostAffine>(); });
    r.add("HostSquareSum", [](const nlohmann::json&) { return std::make_unique<HostSquareSum>(); });
    r.add("HostAdd", [](const nlohmann::json&) { return std::make_unique<HostAdd>(); });
    r.add("HostShift", [](const nlohmann::json&) { return std::make_unique<HostShift>(); });
    return r;
  }();
  return registry;
}

}  // namespace baton::testing
