// ParallelConfig: the "parallel" object of a training config file (the flags' names with '_'),
// unknown fields naming the file and the field, the default micro-batch count and the checks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "parallel/parallel_config.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using baton::testing::error_message;

TEST(ParallelConfig, EveryFieldIsReadFromTheParallelObjectOfAConfigFile) {
  nlohmann::json file = nlohmann::json::parse(R"({"model": "resnet20", "batch_size": 32, "parallel": {
      "stages": 3, "micro_batches": 8, "schedule": "gpipe", "partitioner": "antichain",
      "devices": "cpu:0,cpu:1", "recompute": true, "deferred_bn": true, "trace": "t.json"}})");
  const ParallelConfig p = take_parallel_config(file, "run.json");
  EXPECT_EQ(p.stages, 3);
  EXPECT_EQ(p.micro_batches, 8);
  EXPECT_EQ(p.schedule, ScheduleKind::gpipe);
  EXPECT_EQ(p.partitioner, PartitionerKind::antichain);
  EXPECT_EQ(p.devices, "cpu:0,cpu:1");
  EXPECT_TRUE(p.recompute);
  EXPECT_TRUE(p.deferred_bn);
  EXPECT_EQ(p.trace, "t.json");
  // The rest of the file is left for TrainConfig, which knows no "parallel".
  EXPECT_FALSE(file.contains("parallel"));
  TrainConfig config;
  config.update_from_json(file, "run.json");
  EXPECT_EQ(config.batch_size, 32);

  // Read back from its own JSON, and "devices" as a list.
  ParallelConfig again;
  again.update_from_json(p.to_json(), "again");
  EXPECT_EQ(again.to_json(), p.to_json());
  ParallelConfig listed;
  listed.update_from_json(nlohmann::json::parse(R"({"devices": ["cuda:0", "cuda:1"]})"), "list");
  EXPECT_EQ(listed.devices, "cuda:0,cuda:1");
  EXPECT_EQ(listed.schedule, ScheduleKind::one_f_one_b);  // absent fields keep their values
}

// Every field set away from its default comes back equal from the JSON checkpoints store it as.
TEST(ParallelConfig, EveryFieldRoundTripsThroughItsJson) {
  ParallelConfig p;
  p.stages = 3;
  p.data_parallel = 2;
  p.groups = 4;
  p.grad_sync = GradSyncStrategy::partition;
  p.model_averaging = Averaging::bmuf;
  p.average_every = 5;
  p.block_momentum = 0.5;
  p.block_lr = 0.75;
  p.block_nesterov = false;
  p.elastic_beta = 0.25;
  p.local_after = 7;
  p.averaging_exchange = ExchangeKind::tree;
  p.averaging_cluster = "cpu-4";
  p.unused_parameters = UnusedParameters::ready;
  p.micro_batches = 6;
  p.schedule = ScheduleKind::interleaved;
  p.partitioner = PartitionerKind::hypergraph;
  p.replication = Replication::free;
  p.devices = "cpu:0,cpu:1";
  p.recompute = true;
  p.deferred_bn = true;
  p.trace = "t.json";
  p.comm_backend = comm::CommBackend::mpi;
  p.plan_file = "plan.json";
  const nlohmann::json json = p.to_json();
  EXPECT_NE(json, ParallelConfig().to_json());
  ParallelConfig back;
  back.update_from_json(json, "round trip");
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.block_momentum, 0.5);
  EXPECT_EQ(back.comm_backend, comm::CommBackend::mpi);
  EXPECT_EQ(back.replication, Replication::free);
}

TEST(ParallelConfig, AFileWithoutParallelGivesTheDefaults) {
  nlohmann::json file = {{"model", "resnet20"}};
  ParallelConfig flags;
  flags.stages = 2;
  EXPECT_EQ(take_parallel_config(file, "run.json", flags).stages, 2);
  EXPECT_EQ(take_parallel_config(file, "run.json").stages, 0);
}

TEST(ParallelConfig, UnknownFieldsAndWrongTypesNameTheFileAndTheField) {
  nlohmann::json typo = nlohmann::json::parse(R"({"parallel": {"stages": 2, "micro_batch": 4}})");
  std::string message = error_message([&] { take_parallel_config(typo, "run.json"); });
  EXPECT_NE(message.find("run.json"), std::string::npos) << message;
  EXPECT_NE(message.find("'parallel'"), std::string::npos) << message;
  EXPECT_NE(message.find("micro_batch"), std::string::npos) << message;

  nlohmann::json wrong = nlohmann::json::parse(R"({"parallel": {"stages": "two"}})");
  message = error_message([&] { take_parallel_config(wrong, "run.json"); });
  EXPECT_NE(message.find("run.json"), std::string::npos) << message;
  EXPECT_NE(message.find("stages"), std::string::npos) << message;

  nlohmann::json not_object = nlohmann::json::parse(R"({"parallel": 2})");
  message = error_message([&] { take_parallel_config(not_object, "run.json"); });
  EXPECT_NE(message.find("run.json (field 'parallel')"), std::string::npos) << message;
}

TEST(ParallelConfig, MicroBatchesDefaultToTheLargestCountUpToFourPerStageDividingTheBatch) {
  ParallelConfig p;
  p.stages = 2;
  EXPECT_EQ(micro_batch_count(p, 64), 8);
  EXPECT_EQ(micro_batch_count(p, 12), 6);
  EXPECT_EQ(micro_batch_count(p, 7), 7);
  EXPECT_EQ(micro_batch_count(p, 1), 1);
  p.micro_batches = 3;
  EXPECT_EQ(micro_batch_count(p, 64), 3);
}

TEST(ParallelConfig, ChecksAreOneClearErrorEach) {
  TrainConfig config;
  config.batch_size = 16;
  ParallelConfig p;
  EXPECT_NE(error_message([&] { check_parallel_config(p, config); }).find("--stages must be at least 1"),
            std::string::npos);
  p.stages = 2;
  check_parallel_config(p, config);
  p.micro_batches = 3;
  EXPECT_NE(error_message([&] { check_parallel_config(p, config); }).find("does not divide the batch size 16"),
            std::string::npos);
  p.micro_batches = 4;
  // A schedule is a name only in a file or a flag, refused where it is read.
  EXPECT_NE(error_message([&] {
              p.update_from_json({{"schedule", "zigzag"}}, "run.json");
            }).find("zigzag"),
            std::string::npos);
}

TEST(ParallelConfig, TheCommBackendIsReadByNameAndAnUnknownOneIsOneError) {
  EXPECT_EQ(ParallelConfig().comm_backend, comm::CommBackend::automatic);
  ParallelConfig p;
  p.update_from_json(nlohmann::json::parse(R"({"comm_backend": "nccl-mpi"})"), "run.json");
  EXPECT_EQ(p.comm_backend, comm::CommBackend::nccl_mpi);
  EXPECT_EQ(p.to_json()["comm_backend"], "nccl-mpi");
  EXPECT_ERROR_MENTIONS(
      "run.json: field 'comm_backend' 'gloo' is not a communicator backend: expected auto, inproc, "
      "mpi, nccl or nccl-mpi",
      p.update_from_json(nlohmann::json::parse(R"({"comm_backend": "gloo"})"), "run.json"));
}

}  // namespace
}  // namespace baton::parallel
