// What computes float32 convolutions and matrix products on the CPU in this build: oneDNN (and the
// instruction set it chose at run time) or the reference kernels. For `baton devices` and tests.
#pragma once

#include <cstdint>
#include <string>

namespace baton::kernels {

struct CpuEngineInfo {
  // "oneDNN 2.6.3 (avx512_core)" or "reference (im2col + Eigen)".
  std::string name;
  bool dnnl = false;
  // oneDNN calls made and cached so far (one per op and shape), and shapes oneDNN had no
  // implementation for, which the reference kernels ran instead.
  int64_t dnnl_calls = 0;
  int64_t reference_fallbacks = 0;
  // The instruction set baton's own cloned loops run with here (kernels/cpu/batch_norm_isa.h):
  // "avx512f", "avx2" or "x86-64".
  std::string loops_isa;
};

CpuEngineInfo cpu_engine_info();

}  // namespace baton::kernels
