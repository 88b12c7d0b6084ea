// The process-wide cache of measured convolution algorithms (kernels/conv.h): one entry per
// (pass, shapes, params, dtype, device, TF32, determinism, workspace limit), thread-safe, with the
// problem's descriptors. The CUDA path measures on a miss; the cache itself is plain C++.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "kernels/conv_types.h"
#include "runtime/core/context.h"
#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"

namespace baton::kernels {

struct ConvAlgorithmKey {
  Conv2dPass pass = Conv2dPass::forward;
  DType dtype = DType::f32;
  int device = 0;
  std::array<int64_t, 4> x{};       // input (or dx) shape
  std::array<int64_t, 4> w{};       // filter shape
  std::array<int64_t, 7> params{};  // stride, padding, dilation (h, w each), groups
  bool allow_tf32 = false;          // always false for f64, where it changes nothing
  bool deterministic = false;
  size_t workspace_limit = 0;
  // The alignment in bytes (1 to 16) common to the pass's pointers: some algorithms need 16-byte
  // aligned data, and micro-batch views may start anywhere. 16 for freshly allocated tensors.
  int alignment = 16;

  auto operator<=>(const ConvAlgorithmKey&) const = default;
};

// The key of a problem run with ctx's settings on 16-byte aligned tensors; x and w must have rank 4.
ConvAlgorithmKey conv_algorithm_key(const Context& ctx, Conv2dPass pass, const Shape& x, const Shape& w,
                                    const Conv2dParams& params, DType dtype);

// What the cache keeps per key: the measured algorithm and the backend's descriptors of the problem,
// set up for that algorithm (cuDNN's on CUDA, opaque here: this file is plain C++), so a call of a
// known problem creates no descriptor. The descriptors are only read once cached, by any thread.
struct CachedConvAlgorithm {
  Conv2dAlgorithm algorithm;
  std::shared_ptr<const void> descriptors;
};

// The cached entry (no statistics counted).
std::optional<CachedConvAlgorithm> find_conv_algorithm(const ConvAlgorithmKey& key);

// The cached entry (a hit), or measure() stored and returned (a miss). measure() runs without the
// cache's lock held; when two threads measure one key at once the first result stored wins.
CachedConvAlgorithm conv_algorithm(const ConvAlgorithmKey& key, const std::function<CachedConvAlgorithm()>& measure);

}  // namespace baton::kernels
