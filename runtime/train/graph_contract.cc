// How a batch becomes a model graph's inputs and which outputs are the loss and the prediction.
#include "runtime/train/graph_contract.h"

#include <algorithm>
#include <optional>
#include <string>

#include "runtime/core/error.h"

namespace baton {
namespace {

std::string shape_and_dtype(const Shape& shape, DType dtype) {
  return shape.str() + " " + std::string(dtype_name(dtype));
}

// The batch tensor graph input `name` reads.
const Tensor& batch_tensor(const std::string& name, const data::Batch& batch) {
  if (name == kLabelInput) {
    BATON_CHECK(batch.targets.defined(), "the model graph reads \"", kLabelInput,
                "\" (the targets), the batch has none: ", batch.describe());
    return batch.targets;
  }
  if (name == kImageInput && !batch.has_input(name) && batch.has_input(data::kImagesInput)) {
    return batch.input(data::kImagesInput);
  }
  BATON_CHECK(batch.has_input(name), "the model graph reads an input \"", name, "\" the batch does not have (",
              batch.describe(), "): train it on data whose samples hold \"", name, "\"");
  return batch.input(name);
}

// Throws unless `tensor` matches graph input `v` in dtype and in every dimension past the batch's.
void check_fits(const Graph& graph, ValueId v, const Tensor& tensor) {
  const auto& value = graph.value(v);
  bool fits = tensor.dtype() == value.dtype && tensor.rank() == value.shape.rank() && tensor.rank() >= 1;
  for (int64_t d = 1; fits && d < tensor.rank(); ++d) fits = tensor.size(d) == value.shape[d];
  BATON_CHECK(fits, "the model graph's input \"", value.name, "\" is ", shape_and_dtype(value.shape, value.dtype),
              ", the batch's tensor for it ", shape_and_dtype(tensor.shape(), tensor.dtype()),
              " (the dtype and every dimension past the batch's must match)");
}

}  // namespace

void check_trainable(const Graph& graph, std::string_view where) {
  BATON_CHECK(graph.outputs().size() > kPredictionOutput, where,
              ": the model graph needs two outputs (the loss, then the prediction), has ", graph.outputs().size());
  bool reads_data = false;
  for (ValueId v : graph.inputs()) reads_data = reads_data || graph.value(v).name != kLabelInput;
  BATON_CHECK(reads_data, where, ": the model graph needs an input besides \"", kLabelInput, "\" (e.g. \"", kImageInput,
              "\", the images)");
}

DType parameter_dtype(const Graph& graph) {
  std::optional<ValueId> source;
  for (ValueId v : graph.inputs()) {
    if (!source && is_floating(graph.value(v).dtype)) source = v;
  }
  if (!source) {
    BATON_CHECK(!graph.outputs().empty(),
                "the model graph has no floating-point input and no output, whose dtype "
                "its parameters would take");
    source = graph.outputs()[std::min(kPredictionOutput, graph.outputs().size() - 1)];
  }
  const auto& value = graph.value(*source);
  BATON_CHECK(is_master_dtype(value.dtype), "the model graph's value \"", value.name, "\" is ", dtype_name(value.dtype),
              "; parameters are ", master_dtypes_text(), ", and take that value's dtype");
  return value.dtype;
}

PrecisionPolicy precision_of(const Graph& graph) { return PrecisionPolicy::uniform(parameter_dtype(graph)); }

void check_precision(const Graph& graph, const PrecisionPolicy& precision, std::string_view where) {
  const DType built = parameter_dtype(graph);
  BATON_CHECK(built == precision.activations(), where, ": the model is ", dtype_name(built),
              " and the precision policy is ", precision.str(), ": build the model in ",
              dtype_name(precision.activations()), ", or train it with the policy uniform in ", dtype_name(built));
}

bool has_labels(const Graph& graph) { return graph.has_value(kLabelInput); }

std::vector<Tensor> batch_inputs(const Graph& graph, const std::vector<ValueId>& inputs, const data::Batch& batch) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (ValueId v : inputs) {
    out.push_back(batch_tensor(graph.value(v).name, batch));
    check_fits(graph, v, out.back());
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
