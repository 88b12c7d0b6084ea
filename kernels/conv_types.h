// The parameters, passes and measured algorithms of the convolution (kernels/conv.h), shared by the
// front end, the algorithm cache and the cuDNN launchers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace baton::kernels {

struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};    // >= 1
  std::array<int64_t, 2> padding{0, 0};   // >= 0, zeros on both sides
  std::array<int64_t, 2> dilation{1, 1};  // >= 1
  int64_t groups = 1;                     // divides C and K

  bool operator==(const Conv2dParams&) const = default;
};

// The three convolutions cuDNN implements.
enum class Conv2dPass { forward, backward_data, backward_filter };

// The algorithm the CUDA path uses for a problem, as measured and cached.
struct Conv2dAlgorithm {
  int algo = 0;               // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  int math_type = 0;          // cudnnMathType_t it runs with (CUDNN_FMA_MATH = 3: no tensor cores)
  bool deterministic = true;  // cuDNN reports it as deterministic
  size_t workspace_bytes = 0;
  float measured_ms = 0;  // cuDNN's measurement when it was chosen
};

}  // namespace baton::kernels
