// The nccl backend on 2 and 4 (emulated) GPUs, one thread per rank: the checks every backend passes
// (every operation, dtype and size, compared byte for byte with the rank-order result the host
// backends give), split, send/recv rings, the bootstrap over another communicator, and the same
// bytes as the inproc backend.
#include <gtest/gtest.h>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/inproc_communicator.h"
#include "tests/parallel/comm/nccl_test_support.h"

namespace baton::comm::testing {
namespace {

class NcclChecks : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { BATON_REQUIRE_GPUS(GetParam()); }
  void run(const std::function<void(Communicator&)>& fn) {
    const auto comms = make_nccl_communicators(first_gpus(GetParam()));
    ASSERT_EQ(comms.size(), static_cast<size_t>(GetParam()));
    EXPECT_EQ(comms[1]->backend(), "nccl");
    run_nccl_ranks(comms, fn);
  }
};

TEST_P(NcclChecks, AllReduce) { run(check_every_all_reduce); }
TEST_P(NcclChecks, Broadcast) { run(check_every_broadcast); }
TEST_P(NcclChecks, AllGather) { run(check_every_all_gather); }
TEST_P(NcclChecks, ReduceScatter) { run(check_every_reduce_scatter); }
TEST_P(NcclChecks, RingOfSendsIssuedBeforeTheReceives) {
  run([](Communicator& comm) { check_ring_exchange(comm, 3, 1031, 11); });
}
TEST_P(NcclChecks, Split) {
  run([](Communicator& comm) { check_split(comm, false); });
  run([](Communicator& comm) { check_split(comm, true); });
}
TEST_P(NcclChecks, ManyInFlightWaitOnAndBarrier) {
  run([](Communicator& comm) {
    check_many_in_flight(comm);
    check_wait_on_and_barrier(comm);
  });
}
TEST_P(NcclChecks, AgreementAndRefusedArguments) {
  run([](Communicator& comm) {
    check_agreement_cases(comm);
    check_refused_arguments(comm);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, NcclChecks, ::testing::Values(2, 4), [](const ::testing::TestParamInfo<int>& param) {
  return std::to_string(param.param) + "Gpus";
});

// One NCCL rank per thread, bootstrapped over an inproc group (as over MPI, one per process).
TEST(NcclBootstrap, RanksJoinWithTheUniqueIdBroadcastOverAnotherCommunicator) {
  BATON_REQUIRE_GPUS(2);
  const auto bootstrap = make_inproc_communicators(2);
  run_ranks(bootstrap, [](Communicator& host) {
    const RankDevice device(Device::cuda(host.rank()));
    const std::unique_ptr<Communicator> nccl = make_nccl_communicator(host, Device::cuda(host.rank()));
    EXPECT_EQ(nccl->rank(), host.rank());
    EXPECT_EQ(nccl->size(), 2);
    check_all_reduce(*nccl, DType::f32, ReduceOp::sum, 1031, 5);
    check_ring_exchange(*nccl, 2, 7, 6);
  });
}

// The same inputs through inproc and nccl give the same bytes (both sum in rank order).
TEST(NcclMatchesInproc, SameBytesForEveryReducibleDtype) {
  BATON_REQUIRE_GPUS(4);
  const auto inproc = make_inproc_communicators(4);
  const auto nccl = make_nccl_communicators(first_gpus(4));
  for (DType dtype : kReducibleDTypes) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean}) {
      if (op == ReduceOp::mean && !is_floating(dtype)) continue;
      std::vector<Tensor> host_results(4), gpu_results(4);
      const auto reduce = [&](const std::vector<std::unique_ptr<Communicator>>& comms, std::vector<Tensor>& results,
                              bool on_gpu) {
        run_ranks(comms, [&](Communicator& comm) {
          const RankDevice device(on_gpu ? Device::cuda(comm.rank()) : Device::cpu());
          const Stream s = rank_stream();
          const Tensor buffer = baton::testing::copy_to(rank_input(Shape{4099}, dtype, comm.rank(), 77), s);
          comm.all_reduce(buffer, op, s)->wait();
          results[static_cast<size_t>(comm.rank())] = buffer;
        });
      };
      reduce(inproc, host_results, false);
      reduce(nccl, gpu_results, true);
      for (size_t r = 0; r < 4; ++r) {
        EXPECT_TRUE(same_bytes(gpu_results[r], host_results[r]))
            << dtype_name(dtype) << " " << reduce_op_name(op) << " on rank " << r;
      }
    }
  }
}

}  // namespace
}  // namespace baton::comm::testing
