// Helpers of the NCCL communicator tests: communicators of the first n CUDA devices (skipping when
// fewer exist), run with each rank's thread putting its tensors on its own device.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "parallel/comm/nccl_communicator.h"
#include "runtime/core/device.h"
#include "tests/parallel/comm/comm_checks.h"
#include "tests/support/test_support.h"

namespace baton::comm::testing {

inline std::vector<Device> first_gpus(int count) {
  std::vector<Device> devices;
  for (int d = 0; d < count; ++d) devices.push_back(Device::cuda(d));
  return devices;
}

// Runs fn(comm) on one thread per rank, rank r's tensors on cuda:r.
inline void run_nccl_ranks(const std::vector<std::unique_ptr<Communicator>>& comms,
                           const std::function<void(Communicator&)>& fn) {
  run_ranks(comms, [&](Communicator& comm) {
    const RankDevice device(Device::cuda(comm.rank()));
    fn(comm);
  });
}

}  // namespace baton::comm::testing

// Skips the test unless `n` CUDA devices exist (the emulated GPU has four in these tests).
#define BATON_REQUIRE_GPUS(n)                                                                   \
  do {                                                                                          \
    BATON_REQUIRE_GPU();                                                                        \
    if (::baton::cuda_device_count() < (n)) GTEST_SKIP() << "needs " << (n) << " CUDA devices"; \
  } while (0)
