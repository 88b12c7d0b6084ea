// The ceilings benchmarks report rates against, measured in the same run on the same device: a
// large float32 matrix product (the rate compute-bound layers could reach) and a large copy.
#pragma once

#include <string>

#include "runtime/core/context.h"
#include "tools/bench_timer.h"

namespace baton::cli {

struct Ceiling {
  std::string what;  // "SGEMM 2048x2048x2048 (kernels::matmul)"
  double median_ms = 0;
  double rate = 0;  // GFLOP/s for SGEMM, GB/s (read + write) for the copy
};

// n×n times n×n in float32 through kernels::matmul (oneDNN's or cuBLAS's SGEMM; TF32 as ctx allows).
Ceiling measure_sgemm(Context& ctx, const BenchTimerConfig& timing, int64_t n = 2048);
// kernels::copy of `bytes` bytes (read once, written once).
Ceiling measure_copy(Context& ctx, const BenchTimerConfig& timing, int64_t bytes = int64_t{256} << 20);

}  // namespace baton::cli
