// Max pooling's row loop for float, cloned per instruction set (kernels/cpu/isa_clones.h): the clone this
// processor runs is picked when the library loads. Comparisons and selects only, so every clone gives the
// same maxima and indices (tests/kernels/test_max_pool_rows.cc checks the running one).
#include "kernels/cpu/isa_clones.h"
#include "kernels/cpu/max_pool_rows.h"

namespace baton::kernels::cpu::isa {

BATON_ISA_CLONES void max_pool_row(const float* in, const PoolPlane& p, int64_t oh, InteriorColumns c, float* best,
                                   int32_t* index) {
  cpu::max_pool_row(in, p, oh, c, best, index);
}

}  // namespace baton::kernels::cpu::isa
