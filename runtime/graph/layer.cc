// Layer's defaults: outputs take the first input's dtype; the cost counts only the output bytes.
#include "runtime/graph/layer.h"

namespace baton {

std::vector<DType> Layer::infer_dtypes(std::span<const DType> inputs) const {
  return std::vector<DType>(static_cast<size_t>(num_outputs()), inputs.empty() ? kDefaultDType : inputs[0]);
}

LayerCost Layer::cost(std::span<const Shape> inputs, DType dtype) const {
  LayerCost c;
  for (const Shape& s : infer_shapes(inputs)) c.output_bytes += s.bytes(static_cast<int64_t>(dtype_size(dtype)));
  return c;
}

}  // namespace baton
