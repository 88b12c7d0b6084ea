// Helpers of the emulator's own tests: status checks, device buffers and a death-test pattern.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#define EMU_ASSERT_OK(call) ASSERT_EQ(cudaSuccess, (call)) << #call

namespace emu_test {

// Tests start on device 0 with no pending error (a test may leave another device current).
class OnDevice0 : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
    (void)cudaGetLastError();
  }
};

// A device allocation of `count` T on the current device, freed (synchronously) at scope exit.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)) != cudaSuccess) std::abort();
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return data_; }
  void upload(const std::vector<T>& values) const {
    if (cudaMemcpy(data_, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      std::abort();
  }
  std::vector<T> download() const {
    std::vector<T> values(count_);
    if (cudaMemcpy(values.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) std::abort();
    return values;
  }

 private:
  T* data_ = nullptr;
  size_t count_;
};

}  // namespace emu_test
