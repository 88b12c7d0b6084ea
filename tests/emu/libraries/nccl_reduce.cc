// Emulated NCCL: the data movement of a complete collective. Every rank's input is read first (so
// in-place buffers are safe), reductions combine the ranks in rank order (rank 0, then 1, ...), each
// step rounded to the element type as NCCL's kernels do (f16/bf16 arithmetic in float, rounded after
// every operation); ncclAvg is NCCL's: floating inputs are each multiplied by 1/nranks, then summed;
// integers are summed, then divided.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "nccl_state.h"

namespace baton_emu {
namespace {

template <typename T>
struct Arithmetic {
  using Compute = T;
  static Compute in(T v) { return v; }
  static T out(Compute v) { return v; }
};
template <>
struct Arithmetic<__half> {
  using Compute = float;
  static float in(__half v) { return __half2float(v); }
  static __half out(float v) { return __float2half_rn(v); }
};
template <>
struct Arithmetic<__nv_bfloat16> {
  using Compute = float;
  static float in(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __nv_bfloat16 out(float v) { return __float2bfloat16_rn(v); }
};

template <typename T>
T combine(T a, T b, ncclRedOp_t op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wraps around on overflow, as NCCL's integer kernels do
    switch (op) {
      case ncclProd:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case ncclMax:
        return std::max(a, b);
      case ncclMin:
        return std::min(a, b);
      default:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    }
  } else {
    using A = Arithmetic<T>;
    const auto x = A::in(a), y = A::in(b);
    switch (op) {
      case ncclProd:
        return A::out(x * y);
      case ncclMax:
        return A::out(std::max(x, y));
      case ncclMin:
        return A::out(std::min(x, y));
      default:
        return A::out(x + y);
    }
  }
}

// Element i of the reduction over every rank's input (each `inputs[r]` starting at `offset`).
template <typename T>
T reduce_element(const std::vector<std::vector<unsigned char>>& inputs, size_t index, ncclRedOp_t op) {
  const int ranks = static_cast<int>(inputs.size());
  auto load = [&](int r) {
    T v;
    std::memcpy(&v, inputs[static_cast<size_t>(r)].data() + index * sizeof(T), sizeof(T));
    if constexpr (!std::is_integral_v<T>) {
      if (op == ncclAvg) {
        using A = Arithmetic<T>;
        // The scalar 1/nranks in the element type, as ncclAvg's pre-multiplied sum uses it.
        const auto scale = A::in(A::out(static_cast<typename A::Compute>(1.0 / ranks)));
        v = A::out(A::in(v)*scale);
      }
    }
    return v;
  };
  T acc = load(0);
  for (int r = 1; r < ranks; ++r) acc = combine(acc, load(r), op);
  if constexpr (std::is_integral_v<T>) {
    if (op == ncclAvg) acc = static_cast<T>(acc / static_cast<T>(ranks));
  }
  return acc;
}

template <typename T>
void reduce_typed(const std::vector<std::vector<unsigned char>>& inputs, size_t offset, size_t count, ncclRedOp_t op,
                  unsigned char* out) {
  for (size_t i = 0; i < count; ++i) {
    const T v = reduce_element<T>(inputs, offset + i, op);
    std::memcpy(out + i * sizeof(T), &v, sizeof(T));
  }
}

using ReduceTyped = void (*)(const std::vector<std::vector<unsigned char>>&, size_t, size_t, ncclRedOp_t,
                             unsigned char*);

// out[0..count) = reduction of inputs[r][offset..offset + count) over the ranks.
void reduce(ncclDataType_t dtype, const std::vector<std::vector<unsigned char>>& inputs, size_t offset, size_t count,
            ncclRedOp_t op, unsigned char* out) {
  // Indexed by ncclDataType_t, ncclInt8 (0) to ncclBfloat16 (9); the fp8 types are not emulated.
  static constexpr ReduceTyped kByType[] = {
      &reduce_typed<int8_t>,  &reduce_typed<uint8_t>,      &reduce_typed<int32_t>, &reduce_typed<uint32_t>,
      &reduce_typed<int64_t>, &reduce_typed<uint64_t>,     &reduce_typed<__half>,  &reduce_typed<float>,
      &reduce_typed<double>,  &reduce_typed<__nv_bfloat16>};
  static_assert(ncclInt8 == 0 && ncclUint8 == 1 && ncclInt32 == 2 && ncclUint32 == 3 && ncclInt64 == 4 &&
                ncclUint64 == 5 && ncclFloat16 == 6 && ncclFloat32 == 7 && ncclFloat64 == 8 && ncclBfloat16 == 9);
  if (dtype < 0 || dtype > ncclBfloat16) fatal(std::string("a reduction of ") + dtype_name(dtype) + " is not emulated");
  kByType[dtype](inputs, offset, count, op, out);
}

}  // namespace

size_t dtype_size(ncclDataType_t dtype) {
  switch (dtype) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* dtype_name(ncclDataType_t dtype) {
  static const char* const names[] = {"int8",    "uint8",   "int32",   "uint32",   "int64",      "uint64",
                                      "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  return dtype >= 0 && dtype < ncclNumTypes ? names[dtype] : "an unknown data type";
}

const char* op_name(ncclRedOp_t op) {
  static const char* const names[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < ncclNumOps ? names[op] : "an unknown op";
}

void compute_collective(const Collective& c) {
  const int ranks = static_cast<int>(c.parts.size());
  const size_t element = dtype_size(c.dtype);
  // Bytes each rank sends: the root's buffer for broadcast, count x ranks for reduce_scatter.
  const size_t in_count = c.kind == CollectiveKind::reduce_scatter ? c.count * static_cast<size_t>(ranks) : c.count;
  with_device_memory_open([&] {
    std::vector<std::vector<unsigned char>> inputs(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      if (c.kind == CollectiveKind::broadcast && r != c.root) continue;
      const auto* data = static_cast<const unsigned char*>(c.parts[static_cast<size_t>(r)].send);
      if (in_count > 0) inputs[static_cast<size_t>(r)].assign(data, data + in_count * element);
    }
    for (int r = 0; r < ranks; ++r) {
      auto* out = static_cast<unsigned char*>(c.parts[static_cast<size_t>(r)].recv);
      if (c.count == 0) continue;
      switch (c.kind) {
        case CollectiveKind::all_reduce:
          if (r == 0)
            reduce(c.dtype, inputs, 0, c.count, c.op, out);
          else
            std::memcpy(out, c.parts[0].recv, c.count * element);
          break;
        case CollectiveKind::broadcast:
          std::memcpy(out, inputs[static_cast<size_t>(c.root)].data(), c.count * element);
          break;
        case CollectiveKind::all_gather:
          for (int k = 0; k < ranks; ++k) {
            std::memcpy(out + static_cast<size_t>(k) * c.count * element, inputs[static_cast<size_t>(k)].data(),
                        c.count * element);
          }
          break;
        case CollectiveKind::reduce_scatter:
          reduce(c.dtype, inputs, static_cast<size_t>(r) * c.count, c.count, c.op, out);
          break;
      }
    }
  });
}

}  // namespace baton_emu
