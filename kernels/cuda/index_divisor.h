// Division of element indices by a divisor fixed for a launch, in the memory-bound kernels (bias,
// pooling backward, batch norm): FastDivisor, a 32-bit multiply-high and shift (indices and
// divisors below 2^31), or WideDivisor, a 64-bit division; with_index_divisor picks by the element count.
#pragma once

#include <cstdint>

#include "runtime/core/host_device.h"

namespace baton::kernels::cuda {

// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 as (n · m) >> (32 + s) with m = ceil(2^(31 + l) / d),
// l = ceil(log2 d), s = l - 1 (the multiply-high form of Granlund and Montgomery, as CUTLASS's
// FastDivmod): exact over that range, and no 64-bit division on the device.
class FastDivisor {
 public:
  static constexpr int64_t kLimit = int64_t{1} << 31;  // dividends and divisors stay below it

  explicit FastDivisor(int64_t divisor) : divisor_(static_cast<uint32_t>(divisor)) {
    uint32_t log2_ceil = 0;
    while ((uint64_t{1} << log2_ceil) < divisor_) ++log2_ceil;
    if (divisor_ > 1) {
      multiplier_ = static_cast<uint32_t>(((uint64_t{1} << (31 + log2_ceil)) + divisor_ - 1) / divisor_);
      shift_ = log2_ceil - 1;
    }
  }

  BATON_HOST_DEVICE int64_t div(int64_t n) const {
    if (divisor_ == 1) return n;
    const auto high = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier_) >> 32);
    return static_cast<int64_t>(high >> shift_);
  }

 private:
  uint32_t divisor_ = 1, multiplier_ = 0, shift_ = 0;
};

// n / d by a 64-bit division, for indices of 2^31 elements and more.
class WideDivisor {
 public:
  explicit WideDivisor(int64_t divisor) : divisor_(divisor) {}
  BATON_HOST_DEVICE int64_t div(int64_t n) const { return n / divisor_; }

 private:
  int64_t divisor_;
};

// The channel of element i of an [outer, channels, inner] tensor, (i / inner) mod channels, with
// divisors of type D (FastDivisor or WideDivisor).
template <typename D>
struct ChannelOf {
  D inner, channels;
  int64_t count;  // the number of channels
  ChannelOf(int64_t inner_size, int64_t channel_count)
      : inner(inner_size), channels(channel_count), count(channel_count) {}
  BATON_HOST_DEVICE int64_t operator()(int64_t i) const {
    const int64_t q = inner.div(i);
    return q - channels.div(q) * count;
  }
};

// Calls fn.template operator()<D>() with D = FastDivisor when every index of `elements` elements
// (and so every divisor of them) is below 2^31, else D = WideDivisor.
template <typename Fn>
decltype(auto) with_index_divisor(int64_t elements, Fn&& fn) {
  if (elements <= FastDivisor::kLimit) return fn.template operator()<FastDivisor>();
  return fn.template operator()<WideDivisor>();
}

}  // namespace baton::kernels::cuda
