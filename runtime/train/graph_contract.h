// The trainer's contract with a model graph, written once: each graph input reads the batch input
// of its name (the image models' "x" reads the batch's "images"), the input "labels" reads the
// batch's targets; output 0 is the mean loss and output 1 the prediction (the logits).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "runtime/data/loader.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/precision.h"

namespace baton {

inline constexpr std::string_view kImageInput = "x";       // [n, C, H, W] f32: the batch's "images"
inline constexpr std::string_view kLabelInput = "labels";  // the batch's targets: [n] or [n, T] (optional)
inline constexpr size_t kLossOutput = 0;                   // graph output: the batch's mean loss
inline constexpr size_t kPredictionOutput = 1;             // graph output: the logits, [n, classes]

// Throws unless `graph` can be trained: two outputs or more (the loss, then the prediction) and an
// input besides "labels". `where` begins the message ("Trainer").
void check_trainable(const Graph& graph, std::string_view where);

// The element type of the graph's parameters: that of its first floating-point input ("x" of the
// image models, models::ModelOptions::dtype), or, with none (token ids), of its prediction (output
// 1, else output 0). It must be a master dtype (is_master_dtype: f32 or f64; else an error naming it).
DType parameter_dtype(const Graph& graph);

// The precision policy of a model built for one dtype: uniform in parameter_dtype(graph) (what an
// engine given no policy trains).
PrecisionPolicy precision_of(const Graph& graph);
// Throws unless the graph's values are built in `precision`'s activation dtype (parameter_dtype is):
// the engine `where` then builds its parameters in precision.master().
void check_precision(const Graph& graph, const PrecisionPolicy& precision, std::string_view where);

// Whether the graph takes labels (classification: its prediction is scored top-1 and top-5, per
// position for per-position targets).
bool has_labels(const Graph& graph);

// The batch's tensor for each of `inputs` (graph input values in the order a consumer takes them,
// e.g. Executor::input_values() or Graph::inputs()): "labels" the targets, any other name the batch
// input of that name ("x": "images" when the batch has no "x"). A graph input the batch lacks, or
// whose dtype or shape past dimension 0 differs from the batch tensor's, is an error naming it.
std::vector<Tensor> batch_inputs(const Graph& graph, const std::vector<ValueId>& inputs, const data::Batch& batch);
// The same for the inputs of `executor`, in its order: what Executor::forward takes.
std::vector<Tensor> batch_inputs(const Graph& graph, const Executor& executor, const data::Batch& batch);

// The graph's loss and prediction values (outputs 0 and 1).
ValueId loss_output(const Graph& graph);
ValueId prediction_output(const Graph& graph);

// Where graph value `value` is among executor.output_values() (what Executor::forward returns).
size_t executor_output_index(const Executor& executor, ValueId value);

}  // namespace baton
