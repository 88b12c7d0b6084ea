// main() of the MPI test programs: GoogleTest on every rank of an MpiRuntime; rank 0 prints the
// usual output, the other ranks only their failures; the exit status is non-zero on every rank
// when a test failed on any rank, so mpirun (and ctest) fail.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "tests/parallel/comm/mpi_test_env.h"

namespace baton::comm::testing {
namespace {

MpiRuntime* g_runtime = nullptr;
Communicator* g_world = nullptr;

// A rank's failures, prefixed with the rank (the ranks' outputs interleave).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

}  // namespace

MpiRuntime& mpi_runtime() { return *g_runtime; }
Communicator& mpi_world() { return *g_world; }

}  // namespace baton::comm::testing

int main(int argc, char** argv) {
  using namespace baton;
  ::testing::InitGoogleTest(&argc, argv);
  try {
    comm::MpiRuntime runtime;
    // Rank order: the shared checks compare results bit for bit with sums computed in rank order.
    std::unique_ptr<comm::Communicator> world = runtime.world(comm::MpiReduction::rank_order);
    world->set_timeout(std::chrono::seconds(30));  // a rank that falls behind ends the job, never hangs it
    comm::testing::g_runtime = &runtime;
    comm::testing::g_world = world.get();
    if (runtime.rank() != 0) {
      ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new comm::testing::RankFailurePrinter(runtime.rank()));
    }
    const int result = RUN_ALL_TESTS();
    const Stream s = Stream::create(Device::cpu());
    const Tensor failed = Tensor::from_vector(std::vector<int32_t>{result == 0 ? 0 : 1}, Shape{1}, s);
    world->all_reduce(failed, comm::ReduceOp::sum, s)->wait();
    const int failures = failed.to_vector<int32_t>(s)[0];
    if (runtime.rank() == 0) {
      std::printf("%s: %d of %d ranks passed every test\n", argv[0], runtime.size() - failures, runtime.size());
    }
    comm::testing::g_world = nullptr;
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
