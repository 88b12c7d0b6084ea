// The tensors of checkpoint files: parameters and buffers by name, optimiser state per parameter.
#include "runtime/core/error.h"
#include "runtime/train/checkpoint.h"

namespace baton {

NamedTensors model_tensors(const ParamStore& params) {
  NamedTensors out;
  for (const ParamEntry& e : params.params()) out.emplace_back(e.name, params.param(e.name));
  for (const BufferEntry& b : params.buffers()) out.emplace_back(b.name, params.buffer(b.name));
  return out;
}

NamedTensors optimizer_tensors(const ParamStore& params, const Optimizer& optimizer) {
  NamedTensors out;
  for (const auto& [state_name, flat] : optimizer.state()) {
    BATON_CHECK(flat.defined() && flat.shape() == params.params_flat().shape() && flat.dtype() == params.dtype(),
                "optimiser state '", state_name, "' is not laid out like the parameters (",
                flat.defined() ? dtype_name(flat.dtype()) : "undefined", " ", flat.shape().str(), ", expected ",
                dtype_name(params.dtype()), " ", params.params_flat().shape().str(), ")");
    for (const ParamEntry& e : params.params()) {
      out.emplace_back(state_name + "." + e.name, flat.slice(e.offset, e.offset + e.shape.numel()).reshape(e.shape));
    }
  }
  return out;
}

void save_weights(const std::string& path, const ParamStore& params, Context& ctx,
                  const std::map<std::string, std::string>& metadata) {
  save_safetensors(path, model_tensors(params), metadata, ctx.stream());
}

}  // namespace baton
