// PrecisionPolicy: the dtypes of a training run — the parameters' master copy, the compute copy of the
// weights, the activations, the gradients and the gradient all-reduce — as a default plus overrides
// per layer kind. Only uniform policies run today (everything f32, the default, or everything f64);
// the fields are the seam mixed precision will fill (docs/graph.md, "Precision").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "runtime/core/dtype.h"

namespace baton {

// The dtype of every value of a run that names none: the default policy's, uniform.
inline constexpr DType kDefaultDType = DType::f32;

// The dtypes of one layer kind's values.
struct Precision {
  DType master = kDefaultDType;       // parameters as the optimiser updates and checkpoints them
  DType compute = kDefaultDType;      // the weights as the kernels read them
  DType activations = kDefaultDType;  // the values between layers (the graph's values)
  DType gradients = kDefaultDType;    // gradients of the parameters and of the activations
  DType all_reduce = kDefaultDType;   // what the replicas' gradient all-reduce moves and sums

  bool operator==(const Precision&) const = default;
  // "master f32, compute f32, activations f32, gradients f32, all-reduce f32".
  std::string str() const;
};

class PrecisionPolicy {
 public:
  using ByLayerKind = std::map<std::string, Precision, std::less<>>;

  // Everything kDefaultDType.
  PrecisionPolicy() = default;
  // `defaults` for every layer kind, `by_layer_kind` (keyed by Layer::type(), e.g. "conv2d") for the
  // kinds it names. Checked: every dtype is a master dtype (f32 or f64) and all of them are the same;
  // anything else is one error (mixed precision is not implemented yet).
  explicit PrecisionPolicy(Precision defaults, ByLayerKind by_layer_kind = {});
  // Every dtype `dtype` for every layer kind (f32 or f64; another is one error).
  static PrecisionPolicy uniform(DType dtype);

  const Precision& defaults() const { return defaults_; }
  const ByLayerKind& overrides() const { return by_layer_kind_; }
  // The dtypes of layers of kind `layer_kind`: its override, else the defaults.
  const Precision& of(std::string_view layer_kind) const;

  // The whole model's dtypes while every policy is uniform: one flat ParamStore in master(), the
  // graph built in activations(), gradients and all-reduces in gradients() and all_reduce().
  DType master() const { return defaults_.master; }
  DType compute() const { return defaults_.compute; }
  DType activations() const { return defaults_.activations; }
  DType gradients() const { return defaults_.gradients; }
  DType all_reduce() const { return defaults_.all_reduce; }

  // "uniform f32".
  std::string str() const;

 private:
  Precision defaults_;
  ByLayerKind by_layer_kind_;
};

// Whether a ParamStore holds parameters (master copies) in `dtype`: f32 and f64.
bool is_master_dtype(DType dtype);
// The master dtypes for messages: "f32 or f64".
std::string_view master_dtypes_text();
// One error unless is_master_dtype(dtype): "<where>: dtype f16 is not supported (expected f32 or f64)".
void check_master_dtype(DType dtype, std::string_view where);

}  // namespace baton
