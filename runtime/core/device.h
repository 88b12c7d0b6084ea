// Device: where a tensor lives and work runs: "cpu" / "cpu:N" (virtual CPU devices) or "cuda:N".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

enum class DeviceType : uint8_t { cpu, cuda };

class Device {
 public:
  constexpr Device() = default;  // cpu:0
  constexpr Device(DeviceType type, int index) : type_(type), index_(index) {}

  static constexpr Device cpu(int index = 0) { return Device(DeviceType::cpu, index); }
  static constexpr Device cuda(int index = 0) { return Device(DeviceType::cuda, index); }
  // Parses "cpu", "cpu:N", "cuda", "cuda:N" (N >= 0). Throws baton::Error naming the accepted forms.
  // Whether a CUDA index exists is checked where the device is used (see check_device).
  static Device parse(std::string_view text);

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::cpu; }
  bool is_cuda() const { return type_ == DeviceType::cuda; }
  std::string str() const;  // "cpu:0", "cuda:1"

  bool operator==(const Device& other) const = default;

 private:
  DeviceType type_ = DeviceType::cpu;
  int index_ = 0;
};

// Number of usable CUDA devices: 0 in a CPU-only build or without a GPU/driver (never throws).
int cuda_device_count();
// Throws baton::Error unless the device can be used here: CPU devices always; cuda:N only in a
// CUDA build with a working driver and N < cuda_device_count().
void check_device(Device device);

}  // namespace baton
