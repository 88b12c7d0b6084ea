// The CPU engine's description: oneDNN's version and run-time instruction set, its call cache, and
// the instruction set of baton's own cloned loops.
#include "kernels/cpu_engine.h"

#include "kernels/cpu/batch_norm_isa.h"
#include "runtime/core/build_config.h"  // first: BATON_HAVE_DNNL

#if BATON_HAVE_DNNL
#include <dnnl.hpp>
#include <utility>

#include "kernels/cpu/dnnl_call.h"
#endif

namespace baton::kernels {
namespace {

#if BATON_HAVE_DNNL
const char* isa_name(dnnl::cpu_isa isa) {
  using dnnl::cpu_isa;
  constexpr std::pair<cpu_isa, const char*> kNames[] = {{cpu_isa::sse41, "sse41"},
                                                        {cpu_isa::avx, "avx"},
                                                        {cpu_isa::avx2, "avx2"},
                                                        {cpu_isa::avx2_vnni, "avx2_vnni"},
                                                        {cpu_isa::avx512_core, "avx512_core"},
                                                        {cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
                                                        {cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
                                                        {cpu_isa::avx512_core_amx, "avx512_core_amx"}};
  for (const auto& [value, name] : kNames) {
    if (value == isa) return name;
  }
  return "baseline";
}
#endif

}  // namespace

CpuEngineInfo cpu_engine_info() {
  CpuEngineInfo info;
#if BATON_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  info.name = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
              " (" + isa_name(dnnl::get_effective_cpu_isa()) + ")";
  info.dnnl = true;
  const cpu::DnnlCacheStats stats = cpu::dnnl_call_cache_stats();
  info.dnnl_calls = stats.calls;
  info.reference_fallbacks = stats.unimplemented;
#else
  info.name = "reference (im2col + Eigen)";
#endif
  info.loops_isa = cpu::isa::batch_norm_isa();
  return info;
}

}  // namespace baton::kernels
