// The precision policy's checks: which master dtypes exist, and which mixes run (uniform ones only).
#include "runtime/graph/precision.h"

#include <string>
#include <utility>

#include "runtime/core/error.h"

namespace baton {
namespace {

// Mixed precision is the seam the policy leaves: every dtype of `p` must be `master`.
void check_uniform(const Precision& p, DType master, std::string_view what) {
  const bool uniform = p.master == master && p.compute == master && p.activations == master && p.gradients == master &&
                       p.all_reduce == master;
  BATON_CHECK(uniform, "precision policy: ", what, " is ", p.str(), "; mixed precision is not implemented yet: ",
              "every dtype of the policy (master, compute, activations, gradients, all-reduce, for every layer kind) ",
              "must be the same, ", master_dtypes_text());
}

}  // namespace

std::string Precision::str() const {
  return "master " + std::string(dtype_name(master)) + ", compute " + std::string(dtype_name(compute)) +
         ", activations " + std::string(dtype_name(activations)) + ", gradients " + std::string(dtype_name(gradients)) +
         ", all-reduce " + std::string(dtype_name(all_reduce));
}

PrecisionPolicy::PrecisionPolicy(Precision defaults, ByLayerKind by_layer_kind)
    : defaults_(defaults), by_layer_kind_(std::move(by_layer_kind)) {
  check_master_dtype(defaults_.master, "precision policy: the master (parameter) dtype");
  check_uniform(defaults_, defaults_.master, "the default");
  for (const auto& [kind, precision] : by_layer_kind_) {
    check_uniform(precision, defaults_.master, "layer kind '" + kind + "'");
  }
}

PrecisionPolicy PrecisionPolicy::uniform(DType dtype) {
  return PrecisionPolicy(Precision{dtype, dtype, dtype, dtype, dtype});
}

const Precision& PrecisionPolicy::of(std::string_view layer_kind) const {
  const auto it = by_layer_kind_.find(layer_kind);
  return it == by_layer_kind_.end() ? defaults_ : it->second;
}

std::string PrecisionPolicy::str() const { return "uniform " + std::string(dtype_name(master())); }

bool is_master_dtype(DType dtype) { return dtype == DType::f32 || dtype == DType::f64; }

std::string_view master_dtypes_text() { return "f32 or f64"; }

void check_master_dtype(DType dtype, std::string_view where) {
  BATON_CHECK(is_master_dtype(dtype), where, ": dtype ", dtype_name(dtype), " is not supported (expected ",
              master_dtypes_text(), ")");
}

}  // namespace baton
