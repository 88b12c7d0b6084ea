// Writes, as JSON, baton's float64 results for the sequence pieces that tools/compare_pytorch.py
// --check recomputes in PyTorch: OneHot, Linear over the last dimension of [N, T, features], the
// per-position cross-entropy over [N, T, V] (with and without label smoothing) and the whole
// token-mlp model. Each case is a graph run forward and backward on the CPU: its inputs, parameters,
// outputs, the gradient given to each non-scalar output, the input gradients and parameter gradients.
// Usage: sequence_reference OUT.json
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layers/graph_builder.h"
#include "models/model_registry.h"
#include "runtime/core/error.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"
#include "tests/support/test_support.h"

namespace baton::testing {
namespace {

constexpr int64_t kBatch = 3, kLength = 5, kVocab = 7;

nlohmann::json tensor_json(const Tensor& t, const Stream& s) {
  return {{"shape", t.shape().dims()}, {"values", to_doubles(t, s)}};
}

// Token ids (or labels) in [0, kVocab), shape [kBatch, kLength].
Tensor ids(const Stream& s, uint64_t seed) {
  return random_tensor(Shape{kBatch, kLength}, DType::i64, s, seed, 0.0, static_cast<double>(kVocab));
}

// A floating input that takes a gradient: graph input NAME.raw through an Identity node NAME, whose
// output run_case feeds (the executor's own inputs get gradients; graph inputs do not).
ValueId differentiable_input(layers::GraphBuilder& g, const std::string& name, const Shape& shape) {
  return g.identity(g.input(name + ".raw", shape, DType::f64), name);
}

// Runs `graph` (but its Identity nodes) on `inputs` (by graph input name) and, when `backward`, backward: from the
// loss (the scalar output, gradient 1) when there is one, otherwise with a random gradient for each output.
nlohmann::json run_case(const std::string& name, const Graph& graph, const std::map<std::string, Tensor>& inputs,
                        bool backward) {
  Context ctx(Device::cpu());
  const Stream& s = ctx.stream();
  ParamStore params(graph, graph.topological_order(), DType::f64, ctx);
  params.initialize(ctx, 11);
  std::vector<NodeId> nodes;
  for (NodeId n : graph.topological_order()) {
    if (graph.node(n).layer->type() != "Identity") nodes.push_back(n);
  }
  Executor executor(graph, nodes, params);
  nlohmann::json out = {{"name", name}};
  std::vector<Tensor> in;
  for (ValueId v : executor.input_values()) {
    const std::string& input = graph.value(v).name;
    BATON_CHECK(inputs.count(input) == 1, "sequence_reference: case ", name, " has no input ", input);
    in.push_back(inputs.at(input));
    out["inputs"][input] = tensor_json(in.back(), s);
  }
  for (const ParamEntry& p : params.params()) out["params"][p.name] = tensor_json(params.param(p.name), s);
  Tape tape;
  const std::vector<Tensor> outputs = executor.forward(ctx, in, tape, Mode::train);
  std::vector<Tensor> output_grads(outputs.size());
  const bool has_loss = std::any_of(outputs.begin(), outputs.end(), [](const Tensor& t) { return t.rank() == 0; });
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::string& output = graph.value(executor.output_values()[o]).name;
    out["outputs"][output] = tensor_json(outputs[o], s);
    if (!backward || has_loss) continue;
    output_grads[o] = random_tensor(outputs[o].shape(), DType::f64, s, 100 + o);
    out["output_grads"][output] = tensor_json(output_grads[o], s);
  }
  if (!backward) return out;
  params.zero_grads(ctx);
  const std::vector<Tensor> input_grads = executor.backward(ctx, tape, output_grads);
  for (size_t i = 0; i < input_grads.size(); ++i) {
    if (input_grads[i].defined())
      out["input_grads"][graph.value(executor.input_values()[i]).name] = tensor_json(input_grads[i], s);
  }
  for (const ParamEntry& p : params.params()) out["grads"][p.name] = tensor_json(params.grad(p.name), s);
  return out;
}

nlohmann::json all_cases() {
  const Stream s = Stream::create(Device::cpu());
  nlohmann::json cases = nlohmann::json::array();
  {
    layers::GraphBuilder g;
    g.output(g.one_hot(g.input("tokens", Shape{kBatch, kLength}, DType::i64), kVocab, DType::f64, "one_hot"));
    cases.push_back(run_case("one_hot", g.build(), {{"tokens", ids(s, 1)}}, false));
  }
  {
    layers::GraphBuilder g;
    g.output(g.linear(differentiable_input(g, "x", Shape{kBatch, kLength, 4}), 6, "linear"));
    cases.push_back(
        run_case("linear_rank3", g.build(), {{"x", random_tensor(Shape{kBatch, kLength, 4}, DType::f64, s, 2)}}, true));
  }
  for (double eps : {0.0, 0.1}) {
    layers::GraphBuilder g;
    const ValueId logits = differentiable_input(g, "logits", Shape{kBatch, kLength, kVocab});
    g.output(g.softmax_cross_entropy(logits, g.input("labels", Shape{kBatch, kLength}, DType::i64), "loss", eps));
    const Tensor x = random_tensor(Shape{kBatch, kLength, kVocab}, DType::f64, s, 3, -4.0, 4.0);
    nlohmann::json c = run_case("cross_entropy", g.build(), {{"logits", x}, {"labels", ids(s, 4)}}, true);
    c["label_smoothing"] = eps;
    cases.push_back(std::move(c));
  }
  const models::ModelOptions o{
      .batch_size = kBatch, .num_classes = kVocab, .sequence_length = kLength, .dtype = DType::f64};
  cases.push_back(
      run_case("token_mlp", models::build_model("token-mlp", o), {{"tokens", ids(s, 5)}, {"labels", ids(s, 6)}}, true));
  return cases;
}

}  // namespace
}  // namespace baton::testing

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sequence_reference OUT.json\n";
    return 2;
  }
  try {
    std::ofstream(argv[1]) << nlohmann::json{{"cases", baton::testing::all_cases()}}.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "sequence_reference: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
