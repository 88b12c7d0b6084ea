// Model averaging across a checkpoint, float64 on CPU virtual devices: a run resumed from a
// checkpoint taken between two meetings goes on bit for bit as the uninterrupted run (every
// replica's parameters and optimiser state, BMUF's block momentum, EASGD's centre, the period and
// post-local's switch), for every variant; a checkpoint of another variant or replica count, or
// other knobs, is refused naming the file and the field, before anything is loaded.
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>

#include "parallel/dp/data_parallel_engine.h"
#include "parallel/replicas/averaging_checkpoint.h"
#include "runtime/train/checkpoint.h"
#include "tests/parallel/data_parallel_test_util.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::parallel {

// The variant's name in the parameterised tests' messages.
void PrintTo(const ModelAveraging& averaging, std::ostream* os) { *os << averaging_name(averaging.kind); }

namespace {

using baton::testing::error_message;
using baton::testing::to_doubles;
using testing::dp_mlp;

constexpr double kResumeLr = 0.05;

std::vector<double> replica_values(const DataParallelEngine& e, int replica) {
  return to_doubles(e.params(replica).params_flat(), Stream::create(Device::cpu()));
}

double resume_step(DataParallelEngine& e, const Graph& graph, uint64_t seed) {
  return testing::averaging_step(e, graph, seed, kResumeLr);
}

class ModelAveragingResume : public ::testing::TestWithParam<ModelAveraging> {};

TEST_P(ModelAveragingResume, GoesOnBitForBitFromBetweenTwoMeetings) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const baton::testing::ScratchDir scratch("model_averaging_resume");
  CheckpointManager manager(scratch.path().string(), 0);
  const auto whole = testing::averaging_engine(graph, GetParam());
  std::string dir;
  for (uint64_t s = 0; s < 5; ++s) {
    if (s == 3) {  // the replicas met after step 1 and stepped apart in step 2 (post-local: still synchronous)
      CheckpointState state;
      state.step = 3;
      dir = whole->save_checkpoint(manager, state);
    }
    (void)resume_step(*whole, graph, s);
  }
  const auto resumed = testing::averaging_engine(graph, GetParam());
  EXPECT_EQ(resumed->load_checkpoint(dir).step, 3);
  for (uint64_t s = 3; s < 5; ++s) (void)resume_step(*resumed, graph, s);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(replica_values(*resumed, r), replica_values(*whole, r)) << "replica " << r;
  EXPECT_NE(replica_values(*whole, 0), replica_values(*whole, 1));  // step 4 was a local step
}

INSTANTIATE_TEST_SUITE_P(Variants, ModelAveragingResume,
                         ::testing::Values(ModelAveraging{.kind = Averaging::periodic, .every = 2},
                                           ModelAveraging{.kind = Averaging::bmuf, .every = 2, .block_momentum = 0.5},
                                           ModelAveraging{.kind = Averaging::easgd, .every = 2, .elastic_beta = 0.9},
                                           ModelAveraging{.kind = Averaging::post_local, .every = 2, .local_after = 4}),
                         [](const ::testing::TestParamInfo<ModelAveraging>& param) {
                           std::string name(averaging_name(param.param.kind));
                           std::erase(name, '-');
                           return name;
                         });

TEST(ModelAveragingResumeRefusals, AnotherVariantReplicaCountOrPeriodIsRefusedBeforeLoading) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const baton::testing::ScratchDir scratch("model_averaging_resume_refusals");
  CheckpointManager manager(scratch.path().string(), 0);
  const ModelAveraging bmuf{.kind = Averaging::bmuf, .every = 2};
  const auto writer = testing::averaging_engine(graph, bmuf);
  (void)resume_step(*writer, graph, 0);
  const std::string dir = writer->save_checkpoint(manager, {});
  const auto expect_refused = [&](DataParallelEngine& reader, const std::string& words) {
    const std::vector<double> before = replica_values(reader, 0);
    const std::string message = error_message([&] { (void)reader.load_checkpoint(dir); });
    EXPECT_NE(message.find(std::string(kAveragingFileName)), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_EQ(replica_values(reader, 0), before);  // nothing loaded
  };
  expect_refused(*testing::averaging_engine(graph, {.kind = Averaging::easgd, .every = 2}), "bmuf over 2 replicas");
  expect_refused(*testing::averaging_engine(graph, bmuf, 4), "bmuf over 2 replicas");
  expect_refused(*testing::averaging_engine(graph, {.kind = Averaging::bmuf, .every = 3}), "average_every 2");
}

TEST(ModelAveragingResumeRefusals, ACheckpointWithoutAveragingStateRestartsFromItsModel) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const baton::testing::ScratchDir scratch("model_averaging_resume_plain");
  CheckpointManager manager(scratch.path().string(), 0);
  const auto sync = testing::averaging_engine(graph, {});
  (void)resume_step(*sync, graph, 0);
  const std::string dir = sync->save_checkpoint(manager, {});
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / kAveragingFileName));
  const auto bmuf = testing::averaging_engine(graph, {.kind = Averaging::bmuf, .every = 2});
  (void)bmuf->load_checkpoint(dir);
  EXPECT_EQ(replica_values(*bmuf, 1), replica_values(*sync, 0));
}

}  // namespace
}  // namespace baton::parallel
