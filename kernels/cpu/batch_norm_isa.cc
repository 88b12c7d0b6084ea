// Each function here is cloned by the compiler for AVX-512, AVX2 and baseline x86-64 (target_clones:
// the loader picks one clone per function, by the processor), with its whole body inlined into each
// clone (flatten), so the channel loops vectorise as wide as the processor allows while the
// packaged binary still runs on any x86-64. The arithmetic is the same in every clone (the kernels
// are built with -ffp-contract=off: no fused multiply-adds), so are the bits.
#include "kernels/cpu/batch_norm_isa.h"

#include "kernels/cpu/isa_clones.h"

namespace baton::kernels::cpu::isa {

BATON_ISA_CLONES std::array<double, 2> channel_mean_var(const float* x, const ChannelOf& at) {
  return channel_mean_var_body(x, at);
}
BATON_ISA_CLONES std::array<double, 2> channel_mean_var(const double* x, const ChannelOf& at) {
  return channel_mean_var_body(x, at);
}

BATON_ISA_CLONES void normalize_channel(const float* x, const ChannelOf& at, double mean, double scale, double shift,
                                        float* y) {
  normalize_channel_body(x, at, mean, scale, shift, y);
}
BATON_ISA_CLONES void normalize_channel(const double* x, const ChannelOf& at, double mean, double scale, double shift,
                                        double* y) {
  normalize_channel_body(x, at, mean, scale, shift, y);
}

BATON_ISA_CLONES std::array<double, 2> backward_sums(const float* x, const float* dy, const ChannelOf& at, double mean,
                                                     double invstd) {
  return backward_sums_body(x, dy, at, mean, invstd);
}
BATON_ISA_CLONES std::array<double, 2> backward_sums(const double* x, const double* dy, const ChannelOf& at,
                                                     double mean, double invstd) {
  return backward_sums_body(x, dy, at, mean, invstd);
}

BATON_ISA_CLONES void backward_dx(const float* x, const float* dy, const ChannelOf& at, double mean, double invstd,
                                  double scale, double mean_dy, double mean_dy_xhat, float* dx) {
  backward_dx_body(x, dy, at, mean, invstd, scale, mean_dy, mean_dy_xhat, dx);
}
BATON_ISA_CLONES void backward_dx(const double* x, const double* dy, const ChannelOf& at, double mean, double invstd,
                                  double scale, double mean_dy, double mean_dy_xhat, double* dx) {
  backward_dx_body(x, dy, at, mean, invstd, scale, mean_dy, mean_dy_xhat, dx);
}

const char* batch_norm_isa() {
#if BATON_HAVE_ISA_CLONES
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512f";
  if (__builtin_cpu_supports("avx2")) return "avx2";
#endif
  return "x86-64";
}

}  // namespace baton::kernels::cpu::isa
