// A plan file through the library: with_plan_file gives the layout it implies (and refuses settings
// that contradict it), and make_parallel_training sets up exactly its split, replicas and devices.
#include <gtest/gtest.h>

#include "parallel/plan_file_run.h"
#include "tests/parallel/plan/plan_file_fixtures.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

TEST(PlanFileRun, TrainsTheFilesSplitReplicasAndDevices) {
  const fixtures::PlannedModel model;
  const Graph& graph = model.graph;
  const EvaluatedPlan& planned = model.planned;
  nlohmann::json json = model.plan_file();
  json["devices"] = {"cpu:3", "cpu:2", "cpu:1", "cpu:0"};
  baton::testing::ScratchDir dir("plan_file_run");
  const std::string path = (dir.path() / "plan.json").string();
  baton::testing::write_file(path, json.dump());

  ParallelConfig parallel;
  parallel.plan_file = path;
  const ParallelConfig p = with_plan_file(parallel);
  EXPECT_EQ(p.stages, 2);
  EXPECT_EQ(p.groups, 2);
  EXPECT_EQ(p.micro_batches, 2);
  EXPECT_EQ(p.grad_sync, GradSyncStrategy::partition);
  EXPECT_EQ(p.devices, "cpu:3,cpu:2,cpu:1,cpu:0");
  EXPECT_EQ(with_plan_file(p).to_json(), p.to_json());  // the plan's own values are no contradiction
  ParallelConfig three = parallel;
  three.stages = 3;
  EXPECT_ERROR_MENTIONS("--stages 3 contradicts the plan in " + path + " (2)", with_plan_file(three));

  TrainConfig config;
  config.batch_size = 8;
  const ParallelTraining training = make_parallel_training(graph, "resnet20", config, parallel);
  const Plan& plan = training.setup.planned.plan;
  ASSERT_EQ(plan.num_stages(), 2);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(plan.stages[s].nodes, planned.plan.stages[s].nodes);
    EXPECT_EQ(plan.stages[s].devices, planned.plan.stages[s].devices);
  }
  ASSERT_EQ(training.setup.group_devices.size(), 2u);
  EXPECT_EQ(training.setup.group_devices[0], (std::vector<Device>{Device::cpu(3), Device::cpu(2)}));
  EXPECT_EQ(training.setup.group_devices[1], (std::vector<Device>{Device::cpu(1), Device::cpu(0)}));
  EXPECT_DOUBLE_EQ(training.setup.planned.predicted.step_ms, planned.predicted.step_ms);
  EXPECT_EQ(training.setup.profile.source, "analytic");  // nothing measured
  config.batch_size = 16;
  EXPECT_ERROR_MENTIONS("plan.json: field 'batch' is 8, expected 16",
                        (void)make_parallel_training(graph, "resnet20", config, parallel));
}

}  // namespace
}  // namespace baton::parallel
