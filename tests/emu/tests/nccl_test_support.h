// Helpers of the emulated NCCL's tests: communicators of several emulated devices, driven from one
// thread per rank or from one thread, and element types with NCCL's arithmetic written out.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#define NCCL_ASSERT_OK(call) ASSERT_EQ(ncclSuccess, (call)) << #call

namespace emu_test {

// The NCCL type of T: float, double, __half, __nv_bfloat16, int32_t or int64_t.
template <typename T>
ncclDataType_t nccl_type() {
  constexpr bool kMatches[] = {std::is_same_v<T, float>,   std::is_same_v<T, double>,
                               std::is_same_v<T, __half>,  std::is_same_v<T, __nv_bfloat16>,
                               std::is_same_v<T, int32_t>, std::is_same_v<T, int64_t>};
  constexpr ncclDataType_t kTypes[] = {ncclFloat32, ncclFloat64, ncclFloat16, ncclBfloat16, ncclInt32, ncclInt64};
  constexpr auto kIndex = std::find(std::begin(kMatches), std::end(kMatches), true) - std::begin(kMatches);
  static_assert(std::size(kMatches) == std::size(kTypes) && kIndex < std::ssize(kTypes), "no NCCL type for T");
  return kTypes[kIndex];
}

// a + b rounded to T, as one NCCL reduction step (integers wrap around).
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return T(float(a) + float(b));
  }
}
inline double add(double a, double b) { return a + b; }
inline float add(float a, float b) { return a + b; }

// Random values of every magnitude (so that the order of a sum changes its bits), never all zero.
template <typename T>
std::vector<T> random_values(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> values(count);
  for (T& v : values) {
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(std::uniform_int_distribution<int64_t>(std::numeric_limits<T>::min() / 2,
                                                                std::numeric_limits<T>::max())(rng));
    } else {
      const double magnitude = std::ldexp(1.0, std::uniform_int_distribution<int>(-8, 8)(rng));
      v = T(static_cast<float>(std::uniform_real_distribution<double>(-1, 1)(rng) * magnitude));
      if constexpr (std::is_same_v<T, double>) v = std::uniform_real_distribution<double>(-1, 1)(rng) * magnitude;
    }
  }
  return values;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Runs body(rank, comm, stream) on one thread per rank, with device `rank` current, the
// communicators initialised by ncclCommInitRank from those threads with one unique id, each rank's
// stream created there; destroys them at the end.
inline void on_rank_threads(int ranks, const std::function<void(int, ncclComm_t, cudaStream_t)>& body) {
  ncclUniqueId id;
  ASSERT_EQ(ncclSuccess, ncclGetUniqueId(&id));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      ASSERT_EQ(cudaSuccess, cudaSetDevice(r));
      ncclComm_t comm = nullptr;
      ASSERT_EQ(ncclSuccess, ncclCommInitRank(&comm, ranks, id, r));
      cudaStream_t stream = nullptr;
      ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      body(r, comm, stream);
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
      EXPECT_EQ(cudaSuccess, cudaStreamDestroy(stream));
      EXPECT_EQ(ncclSuccess, ncclCommDestroy(comm));
    });
  }
  for (std::thread& t : threads) t.join();
}

// A device buffer on the current device holding `values`, read back with download().
template <typename T>
class RankBuffer {
 public:
  explicit RankBuffer(const std::vector<T>& values) : count_(values.size()) {
    if (cudaMalloc(&data_, std::max<size_t>(count_, 1) * sizeof(T)) != cudaSuccess) std::abort();
    if (count_ > 0 && cudaMemcpy(data_, values.data(), count_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      std::abort();
  }
  explicit RankBuffer(size_t count) : RankBuffer(std::vector<T>(count, T(-7))) {}
  ~RankBuffer() { cudaFree(data_); }
  RankBuffer(const RankBuffer&) = delete;
  RankBuffer& operator=(const RankBuffer&) = delete;
  T* get() const { return static_cast<T*>(data_); }
  std::vector<T> download(cudaStream_t stream) const {
    std::vector<T> values(count_);
    if (cudaStreamSynchronize(stream) != cudaSuccess) std::abort();
    if (count_ > 0 && cudaMemcpy(values.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
      std::abort();
    return values;
  }

 private:
  void* data_ = nullptr;
  size_t count_;
};

}  // namespace emu_test
