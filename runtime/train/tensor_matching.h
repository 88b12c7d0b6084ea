// Matching a safetensors file's tensors against the tensors a model expects, reporting every
// difference at once, and copying only after a match.
#pragma once

#include <string>
#include <vector>

#include "runtime/train/safetensors.h"

namespace baton {

struct ExpectedTensor {
  std::string name;
  Tensor destination;     // dtype and shape expected; receives the data
  bool optional = false;  // may be absent from the file (it then keeps its value)
};

// One line per difference: the missing names (optional ones excepted), the unexpected names, and
// each tensor whose dtype or shape differs. Empty when the file matches.
std::vector<std::string> tensor_mismatches(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected);

// Throws one error listing `problems` under the files they belong to, unless there are none.
// `what` says what was being loaded ("checkpoint 'runs/a/step-00000100'").
void check_no_mismatches(const std::string& what, const std::vector<std::pair<std::string, std::string>>& problems);

// Copies every expected tensor the file holds into its destination, device ones through `staging`.
void read_expected(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected, const Stream& stream,
                   HostStaging& staging);
// The size of the largest destination, for sizing a HostStaging.
size_t largest_destination_bytes(const std::vector<ExpectedTensor>& expected);

}  // namespace baton
