// RawNcclAllReduce: NCCL called directly, without baton's communicator, as nccl-tests calls it: the
// baseline of `baton bench comm --backend nccl`. Available in CUDA builds (BATON_HAVE_CUDA).
#pragma once

#include <memory>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace baton::comm {

class RawNcclAllReduce {
 public:
  // One raw NCCL communicator per device of `devices` (element r is rank r; CUDA devices, each at
  // most once) from ncclCommInitAll, and one non-blocking stream per device. Throws baton::Error in
  // builds without CUDA, or when NCCL or CUDA fails.
  explicit RawNcclAllReduce(const std::vector<Device>& devices);
  // Destroys the streams, then the communicators.
  ~RawNcclAllReduce();
  RawNcclAllReduce(const RawNcclAllReduce&) = delete;
  RawNcclAllReduce& operator=(const RawNcclAllReduce&) = delete;

  int size() const;

  // `calls` times, from this thread: ncclGroupStart, ncclAllReduce(in place, f32, ncclSum) of
  // buffers[r] on rank r's stream for every rank, ncclGroupEnd, then cudaStreamSynchronize of every
  // stream. Returns the seconds the calls took. buffers[r] is an f32 tensor on rank r's device, of
  // the same number of elements on every rank, whose earlier work has completed.
  double time_all_reduce(const std::vector<Tensor>& buffers, int calls);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace baton::comm
