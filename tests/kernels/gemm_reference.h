// Shared by the matrix-product tests: the problems (every transpose combination, sizes with 1s and
// odd dimensions, alpha and beta values including accumulation), random operands and a naive
// float64 reference.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "tests/support/test_support.h"

namespace baton::testing {

struct GemmCase {
  int64_t m, n, k;
  bool transpose_a, transpose_b;
  double alpha, beta;
};

inline std::vector<GemmCase> gemm_cases() {
  struct Size {
    int64_t m, n, k;
  };
  struct Scale {
    double alpha, beta;
  };
  std::vector<GemmCase> cases;
  for (const Size s : {Size{1, 1, 1}, Size{3, 5, 7}, Size{17, 9, 33}, Size{64, 1, 128}, Size{1, 40, 3}}) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        for (const Scale sc : {Scale{1, 0}, Scale{0.5, 1}, Scale{-1.5, -0.5}}) {
          cases.push_back({s.m, s.n, s.k, ta, tb, sc.alpha, sc.beta});
        }
      }
    }
  }
  return cases;
}

inline std::string gemm_case_name(const GemmCase& g, DType dtype) {
  return std::string(dtype_name(dtype)) + " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
         " k=" + std::to_string(g.k) + (g.transpose_a ? " aT" : "") + (g.transpose_b ? " bT" : "") +
         " alpha=" + std::to_string(g.alpha) + " beta=" + std::to_string(g.beta);
}

// a, b and the initial out (random, on the stream's device) with their values as doubles.
struct GemmOperands {
  Tensor a, b, out_initial;
};

inline GemmOperands gemm_operands(const GemmCase& g, DType dtype, const Stream& stream) {
  const Shape a = g.transpose_a ? Shape{g.k, g.m} : Shape{g.m, g.k};
  const Shape b = g.transpose_b ? Shape{g.n, g.k} : Shape{g.k, g.n};
  return {random_tensor(a, dtype, stream, 11), random_tensor(b, dtype, stream, 12),
          random_tensor(Shape{g.m, g.n}, dtype, stream, 13)};
}

// alpha · op(a) · op(b) + beta · out_initial, by the definition.
inline std::vector<double> gemm_reference(const GemmCase& g, const GemmOperands& in, const Stream& stream) {
  const std::vector<double> a = to_doubles(in.a, stream), b = to_doubles(in.b, stream);
  const std::vector<double> c0 = to_doubles(in.out_initial, stream);
  std::vector<double> out(static_cast<size_t>(g.m * g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double acc = 0;
      for (int64_t l = 0; l < g.k; ++l) {
        const double av = a[static_cast<size_t>(g.transpose_a ? l * g.m + i : i * g.k + l)];
        const double bv = b[static_cast<size_t>(g.transpose_b ? j * g.k + l : l * g.n + j)];
        acc += av * bv;
      }
      const auto at = static_cast<size_t>(i * g.n + j);
      out[at] = g.alpha * acc + (g.beta == 0 ? 0.0 : g.beta * c0[at]);
    }
  }
  return out;
}

}  // namespace baton::testing
