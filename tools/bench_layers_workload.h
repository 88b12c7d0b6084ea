// One layer of `baton bench layers`: the layer with its tensors, and the same work as bare cuDNN /
// cuBLAS calls (tools/bench_layers_direct.cc), which the benchmark times beside baton's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"
#include "runtime/graph/layer.h"

namespace baton::cli {

enum class WorkloadKind { conv, linear, batch_norm };

// What the classifier's row measures beside the library (its Workload::note).
inline constexpr const char* kLinearNote = "baton adds the bias and its gradient; the direct column is the GEMMs alone";

// A layer with its tensors, the timed baton calls and (on CUDA) the same library calls made bare.
struct Workload {
  std::string name, detail;
  WorkloadKind kind = WorkloadKind::conv;
  int count = 1;
  LayerPtr layer;  // a node's layer of the ResNet-50 graph
  bool needs_input_grad = true;
  Shape input_shape;
  std::vector<Tensor> inputs, params, grads, buffers;
  Tensor dy;
  std::vector<Tensor> saved;
  std::string note;
};

// The library calls behind one forward and one backward, each as one function (empty on CPU).
struct DirectCalls {
  std::function<void()> forward, backward;
  std::vector<Tensor> buffers;  // outputs of the bare calls, kept alive
};

// ResNet-50's distinct convolutions, its classifier and its distinct BatchNorm2d layers at `batch`.
std::vector<Workload> make_workloads(int64_t batch);
// Fills the workload's input, parameters, buffers and output gradient: random activations in the
// format the context's convolutions write (channels-last on a CPU context that keeps them so).
void prepare_workload(Context& ctx, Workload& w);

// The bare calls of a prepared workload (its tensors filled): descriptors, workspace and algorithm
// fixed beforehand. Empty on a CPU context.
DirectCalls direct_calls(Context& ctx, const Workload& w);

}  // namespace baton::cli
