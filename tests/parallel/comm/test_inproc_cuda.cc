// The host communicators next to CUDA: GPU tensors are refused with a clear message (GPUs reduce
// through NCCL); a host tensor written by a CUDA stream is read only after that stream's work.
#include <gtest/gtest.h>

#include "parallel/comm/inproc_communicator.h"
#include "tests/parallel/comm/comm_checks.h"

namespace baton::comm {
namespace {

TEST(InprocCuda, GpuTensorsAreRefused) {
  BATON_REQUIRE_GPU();
  auto comms = make_inproc_communicators(2);
  const Stream s = Stream::create(Device::cuda(0));
  const Tensor gpu = Tensor::empty(Shape{4}, DType::f32, s);
  const Tensor host = Tensor::empty(Shape{8}, DType::f32, Stream::create(Device::cpu()));
  EXPECT_ERROR_MENTIONS(
      "all_reduce #0 on rank 0 of 2 (inproc): buffer is on cuda:0: the inproc communicator moves "
      "host (CPU) tensors only",
      comms[0]->all_reduce(gpu, ReduceOp::sum, s));
  EXPECT_ERROR_MENTIONS("output is on cuda:0", comms[0]->all_gather(host.slice(0, 4), gpu, s));
  EXPECT_ERROR_MENTIONS("send to rank 1 on rank 0 of 2 (inproc): tensor is on cuda:0", comms[0]->send(gpu, 1, s));
}

// Each rank copies its values from the GPU into pinned host memory on a CUDA stream and issues the
// all_reduce on that stream without synchronising: the communication thread waits for the copy.
TEST(InprocCuda, HostTensorFromACudaStreamIsReadAfterTheStreamsWork) {
  BATON_REQUIRE_GPU();
  auto comms = make_inproc_communicators(2);
  testing::run_ranks(comms, [](Communicator& comm) {
    const Stream s = Stream::create(Device::cuda(0));
    const std::vector<float> values(4096, static_cast<float>(comm.rank() + 1));
    const Tensor gpu = Tensor::from_vector(values, Shape{4096}, s);
    Tensor host = Tensor::empty_host(Shape{4096}, DType::f32, HostMemory::pinned);
    host.copy_from(gpu, s);
    comm.all_reduce(host, ReduceOp::sum, s)->wait();
    EXPECT_EQ(host.to_vector<float>(Stream::create(Device::cpu())), std::vector<float>(4096, 3.0f));
  });
}

}  // namespace
}  // namespace baton::comm
