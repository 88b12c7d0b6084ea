// Plan files: a plan written and read back is the same plan, and every way a file can disagree with
// itself, the model, the batch or the devices is one error naming the file, the field and what was
// expected.
#include <gtest/gtest.h>

#include <functional>

#include "tests/parallel/plan/plan_file_fixtures.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using fixtures::resnet20_graph;

class PlanFileTest : public ::testing::Test {
 protected:
  // `json_` edited by `edit`, written to plan.json and read back as the plan of resnet20 at batch 8.
  void read(const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = json_;
    edit(j);
    baton::testing::write_file(path_, j.dump());
    (void)plan_of_file(read_plan_file(path_), structure_, 8);
  }

  const fixtures::PlannedModel model_;
  const Profile structure_ = profile_structure(model_.graph, "resnet20");
  const Profile& profile_ = model_.profile;
  const EvaluatedPlan& planned_ = model_.planned;
  nlohmann::json json_ = model_.plan_file();
  baton::testing::ScratchDir dir_{"plan_file"};
  std::string path_ = (dir_.path() / "plan.json").string();
};

TEST_F(PlanFileTest, RoundTripsThePlan) {
  baton::testing::write_file(path_, json_.dump(2));
  const PlanFile file = read_plan_file(path_);
  const Plan plan = plan_of_file(file, structure_, 8);
  ASSERT_EQ(plan.num_stages(), planned_.plan.num_stages());
  for (int s = 0; s < plan.num_stages(); ++s) {
    EXPECT_EQ(plan.stages[s].nodes, planned_.plan.stages[s].nodes) << s;
    EXPECT_EQ(plan.stages[s].replicas, 2) << s;
    EXPECT_EQ(plan.stages[s].devices, planned_.plan.stages[s].devices) << s;
  }
  EXPECT_EQ(plan.batch, 8);
  EXPECT_EQ(plan.micro_batches, planned_.plan.micro_batches);
  EXPECT_EQ(file.micro_batches, 2);  // per group, as --micro-batches
  EXPECT_EQ(file.groups(), 2);
  EXPECT_EQ(file.positions(), 2);
  EXPECT_EQ(file.schedule, ScheduleKind::one_f_one_b);
  EXPECT_EQ(file.grad_sync, "partition");
  EXPECT_EQ(file.devices, (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2", "cuda:3"}));
  EXPECT_EQ(file.model_fingerprint, graph_fingerprint(structure_));
  EXPECT_EQ(graph_fingerprint(profile_), graph_fingerprint(structure_));  // times do not count
  EXPECT_NE(graph_fingerprint(profile_structure(resnet20_graph(100), "resnet20")), graph_fingerprint(structure_));
  // The profile and cluster it was planned with predict the same step again.
  PlanSettings settings;
  settings.batch = 8;
  const EvaluatedPlan again = evaluate_split_plan(planned_.choice, plan, file.profile, file.cluster, settings);
  EXPECT_DOUBLE_EQ(again.predicted.step_ms, planned_.predicted.step_ms);
  EXPECT_DOUBLE_EQ(file.predicted_step_ms, planned_.predicted.step_ms);
}

// Free replication reports the step's micro-batches as one group's; when it chose equal replicas,
// the file still runs them as groups.
TEST_F(PlanFileTest, AFreeReplicationReportWithEqualReplicasRunsAsGroups) {
  json_["groups"] = 1;
  json_["micro_batches"] = 4;
  baton::testing::write_file(path_, json_.dump());
  const PlanFile file = read_plan_file(path_);
  EXPECT_EQ(file.groups(), 2);
  EXPECT_EQ(file.micro_batches, 2);
  EXPECT_EQ(file.step_micro_batches, 4);
}

TEST_F(PlanFileTest, DevicesAreOneKindAndExist) {
  json_["devices"] = {"cpu:0", "cpu:1", "cpu:2", "cpu:3"};
  baton::testing::write_file(path_, json_.dump());
  PlanFile file = read_plan_file(path_);
  EXPECT_EQ(plan_file_devices(file, false).at(3), Device::cpu(3));
  file.devices[1] = "cuda:1";
  EXPECT_ERROR_MENTIONS(
      "plan.json: field 'devices[1]': expected every device a CPU device or every one a GPU, like cpu:0; got cuda:1",
      plan_file_devices(file, true));
  file.devices = {"cuda:99", "cuda:1", "cuda:2", "cuda:3"};
  EXPECT_ERROR_MENTIONS("plan.json: field 'devices[0]': expected a device of this machine",
                        plan_file_devices(file, false));
  EXPECT_NO_THROW(plan_file_devices(file, true));  // under mpirun the processes bring their own
  file.devices[0] = "tpu:0";
  EXPECT_ERROR_MENTIONS("plan.json: field 'devices[0]': expected a device name such as cpu:0 or cuda:0",
                        plan_file_devices(file, true));
}

TEST_F(PlanFileTest, EachMismatchIsOneErrorNamingTheField) {
  EXPECT_ERROR_MENTIONS("plan.json: field 'format': expected \"baton.plan-file/1\"",
                        read([](nlohmann::json& j) { j["format"] = "baton.plan/2"; }));
  EXPECT_ERROR_MENTIONS(
      "plan.json: field 'stages[1].nodes': expected names of the nodes of resnet20; 'conv99' is not one",
      read([](nlohmann::json& j) { j["stages"][1]["nodes"][0] = "conv99"; }));
  EXPECT_ERROR_MENTIONS(
      "plan.json: field 'stages[1].nodes': expected each node in one stage; 'conv1' is in stages 0 and 1",
      read([](nlohmann::json& j) { j["stages"][1]["nodes"].push_back("conv1"); }));
  EXPECT_ERROR_MENTIONS(
      "plan.json: field 'stages': expected every node of resnet20 in a stage; ",
      read([](nlohmann::json& j) { j["stages"][1]["nodes"].erase(j["stages"][1]["nodes"].size() - 1); }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'stages[0].nodes': expected stages in the order the graph runs",
                        read([](nlohmann::json& j) {  // stage 0's first node moved behind it, into stage 1
                          nlohmann::json& first = j["stages"][0]["nodes"];
                          j["stages"][1]["nodes"].insert(j["stages"][1]["nodes"].begin(), first[0]);
                          first.erase(0);
                        }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'stages': expected at least one stage",
                        read([](nlohmann::json& j) { j["stages"] = nlohmann::json::array(); }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'stages[0].devices': expected one device per replica: 2 indices",
                        read([](nlohmann::json& j) { j["stages"][0]["devices"] = {0}; }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'stages[0].devices': expected indices into 'devices' (0..3); 7 is not one",
                        read([](nlohmann::json& j) {
                          j["stages"][0]["devices"] = {0, 7};
                        }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'stages[0].replicas': expected a count dividing the step's 4 micro-batches",
                        read([](nlohmann::json& j) {
                          j["stages"][0]["replicas"] = 3;
                          j["stages"][0]["devices"] = {0, 1, 2};
                        }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'step_micro_batches': expected a count dividing the batch of 8, not 3",
                        read([](nlohmann::json& j) { j["step_micro_batches"] = 3; }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'micro_batches': expected 2, the step's 4 micro-batches over 2 group(s)",
                        read([](nlohmann::json& j) { j["micro_batches"] = 4; }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'schedule': expected gpipe, 1f1b or interleaved",
                        read([](nlohmann::json& j) { j["schedule"] = "zigzag"; }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'grad_sync': expected bucket or partition",
                        read([](nlohmann::json& j) { j["grad_sync"] = "sometimes"; }));
  EXPECT_ERROR_MENTIONS("plan.json: field 'planned_with': expected the profile of the model 'model_fingerprint' names",
                        read([](nlohmann::json& j) { j["model_fingerprint"] = "0123456789abcdef"; }));
  EXPECT_ERROR_MENTIONS(
      "plan.json: field 'batch' is 8, expected 16, the batch being trained",
      (void)plan_of_file((baton::testing::write_file(path_, json_.dump()), read_plan_file(path_)), structure_, 16));
  EXPECT_ERROR_MENTIONS(
      "plan.json: field 'model_fingerprint' is " + graph_fingerprint(structure_) + " (resnet20), expected ",
      (void)plan_of_file(read_plan_file(path_), profile_structure(resnet20_graph(100), "resnet20"), 8));
  EXPECT_NO_THROW(read([](nlohmann::json&) {}));
}

}  // namespace
}  // namespace baton::parallel
