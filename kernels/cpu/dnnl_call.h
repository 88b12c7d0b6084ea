// One oneDNN primitive over tensors in baton's plain layouts (kernels/cpu/dnnl_call.cc; builds with
// BATON_HAVE_DNNL only): the primitive picks its preferred layouts, and each call reorders inputs
// into them and outputs back, in a workspace the caller provides. Calls are cached per shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <dnnl.hpp>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace baton::kernels::cpu {

// The process's oneDNN CPU engine.
const dnnl::engine& dnnl_engine();
// Attributes with a user-provided scratchpad, so that threads may share a primitive.
dnnl::primitive_attr dnnl_user_scratchpad();

// Scratch memory for one call: returns at least `bytes`, valid until the call returns.
using Workspace = std::function<void*(size_t bytes)>;

// How a primitive uses one argument: read it, overwrite it, or add its result to it.
enum class DnnlRole { input, output, accumulate };

struct DnnlArgument {
  int id;                    // DNNL_ARG_*
  dnnl::memory::desc user;   // the plain layout baton keeps the tensor in
  dnnl::memory::desc inner;  // the layout the primitive reads or writes
  DnnlRole role;
};

// A primitive, its arguments and its scratchpad: immutable once made, so any thread may run it.
class DnnlCall {
 public:
  DnnlCall(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad, std::vector<DnnlArgument> arguments);

  // Bytes of workspace run() needs: reordered copies of the arguments whose layouts differ (every
  // accumulated one), and the scratchpad.
  size_t workspace_bytes() const { return workspace_bytes_; }
  // Runs the primitive on the calling thread's CPU threads (cpu_threads()); data[i] is argument i's
  // tensor in its user layout, workspace holds workspace_bytes().
  void run(std::span<void* const> data, void* workspace) const;

 private:
  struct Staged {
    DnnlArgument argument;
    size_t offset = 0;  // of its inner copy in the workspace (when `reordered`)
    bool reordered = false;
    dnnl::reorder reorder;  // user → inner for inputs, inner → user (with a sum for accumulate) otherwise
  };
  dnnl::primitive primitive_;
  dnnl::memory::desc scratchpad_;
  size_t scratchpad_offset_ = 0;
  std::vector<Staged> staged_;
  size_t workspace_bytes_ = 0;
};

// The call of the Primitive that `pd` describes, with pd's scratchpad.
template <typename Primitive>
std::shared_ptr<const DnnlCall> make_dnnl_call(const typename Primitive::primitive_desc& pd,
                                               std::vector<DnnlArgument> arguments) {
  return std::make_shared<DnnlCall>(Primitive(pd), pd.scratchpad_desc(), std::move(arguments));
}

// The call cached under `op_key` (the op, its shapes and parameters) and the calling thread's
// cpu_threads() (a primitive keeps the thread count it was made with), made by `make` the first
// time; nullptr when `make` returns nullptr (oneDNN has no implementation: the caller uses the
// reference). Thread-safe.
std::shared_ptr<const DnnlCall> cached_dnnl_call(const std::string& op_key,
                                                 const std::function<std::shared_ptr<const DnnlCall>()>& make);

// Runs `call` on `data` (its arguments' tensors, in order; inputs are only read) with scratch from
// `workspace`; false, doing nothing, when call is nullptr (oneDNN has no implementation).
bool run_dnnl_call(const std::shared_ptr<const DnnlCall>& call, std::initializer_list<const void*> data,
                   const Workspace& workspace);

struct DnnlCacheStats {
  int64_t calls = 0;          // cached calls
  int64_t unimplemented = 0;  // keys oneDNN had no implementation for
};
DnnlCacheStats dnnl_call_cache_stats();

// A plain row-major float32 memory descriptor of these dimensions.
dnnl::memory::desc dnnl_plain_f32(const dnnl::memory::dims& dims);
// The same dimensions with the layout left to the primitive.
dnnl::memory::desc dnnl_any_f32(const dnnl::memory::dims& dims);

}  // namespace baton::kernels::cpu
