// How a batch becomes a model graph's inputs and which outputs are the loss and the prediction.
#include "runtime/train/graph_contract.h"

#include <algorithm>
#include <string>

#include "runtime/core/error.h"

namespace baton {
namespace {

void check_input_name(const std::string& name, std::string_view where) {
  BATON_CHECK(name == kImageInput || name == kLabelInput, where, ": the model graph has an input '", name,
              "'; the trainer feeds only \"", kImageInput, "\" and \"", kLabelInput, "\"");
}

}  // namespace

void check_trainable(const Graph& graph, std::string_view where) {
  BATON_CHECK(graph.outputs().size() > kPredictionOutput, where,
              ": the model graph needs two outputs (the loss, then the prediction), has ", graph.outputs().size());
  BATON_CHECK(graph.has_value(kImageInput), where, ": the model graph needs an input named \"", kImageInput, "\"");
  for (ValueId v : graph.inputs()) check_input_name(graph.value(v).name, where);
}

DType parameter_dtype(const Graph& graph) {
  BATON_CHECK(graph.has_value(kImageInput), "the model graph has no input named \"", kImageInput,
              "\", whose dtype its parameters take");
  const DType dtype = graph.value(graph.value_id(kImageInput)).dtype;
  BATON_CHECK(is_master_dtype(dtype), "the model graph's input \"", kImageInput, "\" is ", dtype_name(dtype),
              "; parameters are ", master_dtypes_text(), ", and take that input's dtype");
  return dtype;
}

PrecisionPolicy precision_of(const Graph& graph) { return PrecisionPolicy::uniform(parameter_dtype(graph)); }

void check_precision(const Graph& graph, const PrecisionPolicy& precision, std::string_view where) {
  const DType built = parameter_dtype(graph);
  BATON_CHECK(built == precision.activations(), where, ": the model is ", dtype_name(built), " (its input \"",
              kImageInput, "\") and the precision policy is ", precision.str(), ": build the model in ",
              dtype_name(precision.activations()), ", or train it with the policy uniform in ", dtype_name(built));
}

bool has_labels(const Graph& graph) { return graph.has_value(kLabelInput); }

std::vector<Tensor> batch_inputs(const Graph& graph, const std::vector<ValueId>& inputs, const data::Batch& batch) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (ValueId v : inputs) {
    const std::string& name = graph.value(v).name;
    check_input_name(name, "batch_inputs");
    out.push_back(name == kImageInput ? batch.images : batch.labels);
  }
  return out;
}

std::vector<Tensor> batch_inputs(const Graph& graph, const Executor& executor, const data::Batch& batch) {
  return batch_inputs(graph, executor.input_values(), batch);
}

ValueId loss_output(const Graph& graph) {
  BATON_CHECK(graph.outputs().size() > kLossOutput, "the model graph has no output (the loss comes first)");
  return graph.outputs()[kLossOutput];
}

ValueId prediction_output(const Graph& graph) {
  BATON_CHECK(graph.outputs().size() > kPredictionOutput,
              "the model graph has no second output (the prediction comes after the loss)");
  return graph.outputs()[kPredictionOutput];
}

size_t executor_output_index(const Executor& executor, ValueId value) {
  const std::vector<ValueId>& outputs = executor.output_values();
  const auto it = std::find(outputs.begin(), outputs.end(), value);
  BATON_CHECK(it != outputs.end(), "graph value ", value, " is not among the executor's outputs");
  return static_cast<size_t>(it - outputs.begin());
}

}  // namespace baton
