// Fixed-order element-wise reductions over host buffers for every reducible dtype.
#include "parallel/comm/reduce_kernel.h"

#include <algorithm>
#include <array>
#include <type_traits>

#include "runtime/core/error.h"

namespace baton::comm {
namespace {

constexpr int64_t kBlock = 1024;

// How an element is widened to the accumulator and narrowed back.
template <typename T>
struct Accumulate;
// float and double accumulate as themselves.
template <typename T>
requires std::is_floating_point_v<T>
struct Accumulate<T> {
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc v) { return v; }
};
// Half and BFloat16 accumulate in float, rounded back by kStore.
template <typename T, float (*kLoad)(T), T (*kStore)(float)>
struct AccumulateInFloat {
  using Acc = float;
  static Acc load(T v) { return kLoad(v); }
  static T store(Acc v) { return kStore(v); }
};
template <>
struct Accumulate<Half> : AccumulateInFloat<Half, half_to_float, float_to_half> {};
template <>
struct Accumulate<BFloat16> : AccumulateInFloat<BFloat16, bfloat16_to_float, float_to_bfloat16> {};
// Integers add as unsigned 64-bit numbers (defined wrap-around), converted back modulo 2^bits.
template <typename T>
requires std::is_integral_v<T>
struct Accumulate<T> {
  using Acc = uint64_t;
  static Acc load(T v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
  static T store(Acc v) { return static_cast<T>(static_cast<std::make_unsigned_t<T>>(v)); }
};

template <typename T>
void reduce_typed(bool mean, int divisor, std::span<const void* const> sources, std::span<void* const> dests,
                  int64_t count) {
  using A = Accumulate<T>;
  using Acc = typename A::Acc;
  std::array<Acc, kBlock> acc{};
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    const T* first = static_cast<const T*>(sources[0]) + start;
    for (int64_t i = 0; i < n; ++i) acc[i] = A::load(first[i]);
    for (size_t k = 1; k < sources.size(); ++k) {
      const T* src = static_cast<const T*>(sources[k]) + start;
      for (int64_t i = 0; i < n; ++i) acc[i] += A::load(src[i]);
    }
    if constexpr (std::is_floating_point_v<Acc>) {
      if (mean) {
        const Acc d = static_cast<Acc>(divisor);
        for (int64_t i = 0; i < n; ++i) acc[i] /= d;
      }
    }
    for (void* dest : dests) {
      T* out = static_cast<T*>(dest) + start;
      for (int64_t i = 0; i < n; ++i) out[i] = A::store(acc[i]);
    }
  }
}

}  // namespace

void reduce_in_order(DType dtype, ReduceOp op, int divisor, std::span<const void* const> sources,
                     std::span<void* const> dests, int64_t count) {
  BATON_CHECK(!sources.empty(), "reduce_in_order: no source buffer");
  BATON_CHECK(divisor > 0, "reduce_in_order: divisor ", divisor);
  const bool mean = op == ReduceOp::mean;
  BATON_CHECK(!mean || is_floating(dtype), "reduce_in_order: mean of ", dtype_name(dtype));
  switch (dtype) {
    case DType::f32:
      return reduce_typed<float>(mean, divisor, sources, dests, count);
    case DType::f64:
      return reduce_typed<double>(mean, divisor, sources, dests, count);
    case DType::f16:
      return reduce_typed<Half>(mean, divisor, sources, dests, count);
    case DType::bf16:
      return reduce_typed<BFloat16>(mean, divisor, sources, dests, count);
    case DType::i32:
      return reduce_typed<int32_t>(mean, divisor, sources, dests, count);
    case DType::i64:
      return reduce_typed<int64_t>(mean, divisor, sources, dests, count);
    case DType::u8:
      break;
  }
  BATON_FAIL("reduce_in_order: dtype ", dtype_name(dtype), " cannot be reduced");
}

}  // namespace baton::comm
