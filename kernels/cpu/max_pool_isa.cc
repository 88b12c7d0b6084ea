// Max pooling's row loop and channels-last tap and gather loops for float, cloned per instruction set
// (kernels/cpu/isa_clones.h): the clone this processor runs is picked when the library loads.
// Comparisons and selects only, so every clone gives the same maxima and indices
// (tests/kernels/test_max_pool_rows.cc checks the running one).
#include "kernels/cpu/isa_clones.h"
#include "kernels/cpu/max_pool_rows.h"
#include "kernels/cpu/pool_channels_last_cpu.h"

namespace baton::kernels::cpu::isa {

BATON_ISA_CLONES void max_pool_row(const float* in, const PoolPlane& p, int64_t oh, InteriorColumns c, float* best,
                                   int32_t* index) {
  cpu::max_pool_row(in, p, oh, c, best, index);
}

BATON_ISA_CLONES void max_pool_tap(const float* tap, int64_t channels, int32_t i, float* best, int32_t* index) {
  cpu::max_pool_tap_values(tap, channels, i, best, index);
}

BATON_ISA_CLONES void max_pool_gather(const int32_t* chosen, const float* g, int64_t channels, int32_t i, double* sum) {
  cpu::max_pool_gather_values(chosen, g, channels, i, sum);
}

}  // namespace baton::kernels::cpu::isa
