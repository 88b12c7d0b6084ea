// Matching a safetensors file's tensors against the tensors a model expects, reporting every
// difference at once, and copying (converting floating dtypes where allowed) only after a match.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/context.h"
#include "runtime/train/safetensors.h"

namespace baton {

struct ExpectedTensor {
  std::string name;
  Tensor destination;     // dtype and shape expected; receives the data
  bool optional = false;  // may be absent from the file (it then keeps its value)
};

// Whether a floating tensor of the file may have another floating dtype (f32, f64, f16, bf16)
// than its destination.
enum class DTypeRule {
  exact,    // no: resuming a checkpoint restores the exact state
  convert,  // yes: the values are converted to the destination's dtype (loading weights)
};

// Tensors whose dtype alone differs, file dtype `file` where the model has `model`.
struct DTypeDifference {
  DType file = DType::f32;
  DType model = DType::f32;
  int64_t count = 0;
  std::string first;  // the first such tensor's name
};

// Adds `difference` to the group of its pair of dtypes in `groups` (a new group when none).
void merge_dtype_difference(std::vector<DTypeDifference>& groups, const DTypeDifference& difference);

struct TensorMismatches {
  // One line per difference: the missing names (optional ones excepted), the unexpected names, and
  // each tensor whose shape differs or whose dtype differs to or from an integer dtype.
  std::vector<std::string> lines;
  // Floating tensors of the right shape in another floating dtype (DTypeRule::exact only), grouped
  // by the pair of dtypes, in the order first seen.
  std::vector<DTypeDifference> dtypes;

  bool empty() const { return lines.empty() && dtypes.empty(); }
};

TensorMismatches tensor_mismatches(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected,
                                   DTypeRule rule);

// One line for a group of dtype differences: "62 tensor(s) are f32 in the file where the model has
// f64 (conv1.weight, ...)".
std::string describe(const DTypeDifference& difference);

// Throws one error listing `problems` under the files they belong to, unless there are none.
// `what` says what was being loaded ("checkpoint 'runs/a/step-00000100'").
void check_no_mismatches(const std::string& what, const std::vector<std::pair<std::string, std::string>>& problems);

// Whether a tensor is never below zero: BatchNorm's running_var and num_batches_tracked, AdamW's
// exp_avg_sq state.
bool never_negative(const std::string& name);

// Reads every tensor of `expected` that `file` holds and throws, naming the file and the tensor, at
// the first checksum mismatch, NaN or infinity, or negative value of a never_negative tensor:
// called for every file of a load before anything is copied.
void check_tensor_data(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected);

// Copies every expected tensor the file holds into its destination, ordered on ctx's stream (the
// destinations hold the data when this returns), device ones through `staging`; a tensor of another
// floating dtype is read as it is and converted (kernels::cast: round to nearest even).
void read_expected(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected, Context& ctx,
                   HostStaging& staging);
// The size of the largest destination, for sizing a HostStaging.
size_t largest_destination_bytes(const std::vector<ExpectedTensor>& expected);

}  // namespace baton
