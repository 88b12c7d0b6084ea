// RawNcclAllReduce (nccl_raw.h): raw NCCL communicators from ncclCommInitAll and one stream per
// device, all-reduces issued for every device from one thread in one NCCL group, as nccl-tests does.
#include "parallel/comm/nccl_raw.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <set>

#include "runtime/core/cuda/cuda_check.h"
#include "runtime/core/cuda/nccl_check.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"

namespace baton::comm {
namespace {

// The communicators of ncclCommInitAll, destroyed together.
struct RawComms {
  std::vector<ncclComm_t> comms;
  explicit RawComms(const std::vector<int>& devices) : comms(devices.size(), nullptr) {
    BATON_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  }
  ~RawComms() {
    for (ncclComm_t comm : comms) {
      if (const ncclResult_t result = ncclCommDestroy(comm); result != ncclSuccess) {
        log_warn(detail::concat("raw nccl baseline: ncclCommDestroy failed: ", ncclGetErrorString(result)));
      }
    }
  }
  RawComms(const RawComms&) = delete;
  RawComms& operator=(const RawComms&) = delete;
};

// A non-blocking stream on one device.
struct RawStream {
  int device = 0;
  cudaStream_t stream = nullptr;
  explicit RawStream(int device_index) : device(device_index) {
    const CudaDeviceGuard guard(device);
    BATON_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~RawStream() {
    const CudaDeviceGuard guard(device, std::nothrow);
    detail::log_cuda_failure(cudaStreamDestroy(stream), "cudaStreamDestroy", device);
  }
  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;
};

std::vector<int> device_indices(const std::vector<Device>& devices) {
  BATON_CHECK(!devices.empty(), "RawNcclAllReduce: no devices");
  std::vector<int> indices;
  std::set<int> seen;
  for (const Device& device : devices) {
    check_device(device);
    BATON_CHECK(device.is_cuda(), "RawNcclAllReduce: ", device.str(), " is not a CUDA device");
    BATON_CHECK(seen.insert(device.index()).second, "RawNcclAllReduce: ", device.str(), " is listed twice");
    indices.push_back(device.index());
  }
  return indices;
}

}  // namespace

struct RawNcclAllReduce::State {
  std::vector<int> devices;
  RawComms comms;                                   // declared before the streams: destroyed after them
  std::vector<std::unique_ptr<RawStream>> streams;  // streams[r] on devices[r]
  explicit State(std::vector<int> indices) : devices(std::move(indices)), comms(devices) {
    for (int device : devices) streams.push_back(std::make_unique<RawStream>(device));
  }
};

RawNcclAllReduce::RawNcclAllReduce(const std::vector<Device>& devices)
    : state_(std::make_unique<State>(device_indices(devices))) {}

RawNcclAllReduce::~RawNcclAllReduce() = default;

int RawNcclAllReduce::size() const { return static_cast<int>(state_->devices.size()); }

double RawNcclAllReduce::time_all_reduce(const std::vector<Tensor>& buffers, int calls) {
  const State& s = *state_;
  BATON_CHECK(buffers.size() == s.devices.size(), "RawNcclAllReduce: ", buffers.size(), " buffers for ",
              s.devices.size(), " ranks");
  BATON_CHECK(calls >= 1, "RawNcclAllReduce: calls must be >= 1 (got ", calls, ")");
  const int64_t count = buffers[0].numel();
  for (size_t r = 0; r < buffers.size(); ++r) {
    const Tensor& b = buffers[r];
    BATON_CHECK(
        b.defined() && b.dtype() == DType::f32 && b.numel() == count && b.device() == Device::cuda(s.devices[r]),
        "RawNcclAllReduce: buffer ", r, " must be f32 of ", count, " elements on cuda:", s.devices[r]);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < calls; ++c) {
    BATON_NCCL_CHECK(ncclGroupStart());
    try {
      for (size_t r = 0; r < buffers.size(); ++r) {
        void* data = buffers[r].data_ptr();
        BATON_NCCL_CHECK(ncclAllReduce(data, data, static_cast<size_t>(count), ncclFloat, ncclSum, s.comms.comms[r],
                                       s.streams[r]->stream));
      }
    } catch (...) {
      ncclGroupEnd();  // leave no group open on this thread; the error is the one thrown
      throw;
    }
    BATON_NCCL_CHECK(ncclGroupEnd());
    for (const auto& stream : s.streams) BATON_CUDA_CHECK(cudaStreamSynchronize(stream->stream));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace baton::comm
