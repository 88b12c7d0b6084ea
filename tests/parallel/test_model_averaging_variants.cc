// BMUF, EASGD and post-local SGD in the data-parallel engine, float64 on CPU virtual devices:
// post-local SGD's first K steps are synchronous data parallelism; one BMUF block is the replicas'
// average change times the block learning rate (and block momentum, Nesterov-style); one EASGD
// period moves replicas and centre elastically; checkpoints hold BMUF's global model and EASGD's
// centre while the replicas go on from their own parameters; the ring and the tree train the same;
// BMUF and EASGD fit shapes images far above chance through make_data_parallel_engine.
#include <gtest/gtest.h>

#include "parallel/parallel_training.h"
#include "runtime/data/shapes.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/trainer.h"
#include "tests/parallel/data_parallel_test_util.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using baton::testing::all_close;
using baton::testing::to_doubles;
using testing::dp_batch;
using testing::dp_mlp;
using testing::dp_optimizer;

constexpr double kVariantsLr = 0.05;
using Vec = std::vector<double>;

std::unique_ptr<DataParallelEngine> variant_engine(const Graph& graph, ModelAveraging averaging, int replicas = 2) {
  return testing::averaging_engine(graph, std::move(averaging), replicas);
}

double variant_step(DataParallelEngine& e, const Graph& graph, uint64_t seed) {
  return testing::averaging_step(e, graph, seed, kVariantsLr);
}

Vec replica_params(const DataParallelEngine& e, int replica) {
  return to_doubles(e.params(replica).params_flat(), Stream::create(Device::cpu()));
}

// a + s (b - a), elementwise.
Vec towards(const Vec& a, const Vec& b, double s) {
  Vec out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] + s * (b[i] - a[i]);
  return out;
}

// The parameters of the model file of the checkpoint `e` writes, read back by a fresh engine (a
// resumed engine's replicas go on from their own parameters: test_model_averaging_resume.cc).
Vec checkpointed(DataParallelEngine& e, const Graph& graph, const ModelAveraging& averaging) {
  const baton::testing::ScratchDir scratch("model_averaging_variants");
  CheckpointManager manager(scratch.path().string(), 1);
  const std::string dir = e.save_checkpoint(manager, {});
  const auto reader = variant_engine(graph, averaging);
  reader->load_weights(dir + "/" + std::string(kModelFileName));
  return replica_params(*reader, 1);
}

TEST(ModelAveragingVariants, PostLocalIsSynchronousForTheFirstKSteps) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto post = variant_engine(graph, {.kind = Averaging::post_local, .every = 2, .local_after = 2});
  const auto sync = variant_engine(graph, {});
  for (uint64_t s = 0; s < 2; ++s) {
    const double expected = variant_step(*sync, graph, s);
    EXPECT_NEAR(variant_step(*post, graph, s), expected, 1e-12 * std::abs(expected)) << "step " << s;
    EXPECT_FALSE(post->last_step(0).buckets.empty()) << "step " << s << ": gradients all-reduced";
    for (int r = 0; r < 2; ++r)
      EXPECT_TRUE(all_close(replica_params(*post, r), replica_params(*sync, 0), 1e-12, 1e-12)) << s;
  }
  variant_step(*post, graph, 2);
  EXPECT_TRUE(post->last_step(0).buckets.empty());  // local SGD from step K on
  EXPECT_NE(replica_params(*post, 0), replica_params(*post, 1));
  variant_step(*post, graph, 3);
  EXPECT_EQ(replica_params(*post, 0), replica_params(*post, 1));  // met after K + H steps
  EXPECT_EQ(post->averaging_meetings(), 1);
}

TEST(ModelAveragingVariants, BmufBlockIsTheAverageChangeWithBlockMomentum) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto periodic = variant_engine(graph, {.kind = Averaging::periodic, .every = 2});
  const ModelAveraging nesterov{.kind = Averaging::bmuf, .every = 2, .block_momentum = 0.5, .block_lr = 0.7};
  ModelAveraging classic = nesterov;
  classic.block_nesterov = false;
  const auto a = variant_engine(graph, nesterov), b = variant_engine(graph, classic);
  const Vec w0 = replica_params(*a, 0);
  for (uint64_t s = 0; s < 2; ++s) {
    for (DataParallelEngine* e : {periodic.get(), a.get(), b.get()}) variant_step(*e, graph, s);
  }
  const Vec mean = replica_params(*periodic, 0);  // w0 + G: the same local steps, averaged
  // v = zeta G; w_g = w0 + v; Nesterov-style replicas start from w_g + mu v, classic ones from w_g.
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(all_close(replica_params(*a, r), towards(w0, mean, 0.7 * 1.5), 1e-12, 1e-12)) << r;
    EXPECT_TRUE(all_close(replica_params(*b, r), towards(w0, mean, 0.7), 1e-12, 1e-12)) << r;
  }
  // The checkpoint holds the global model w_g; the replicas go on from w_g + mu v.
  const Vec before = replica_params(*a, 0);
  EXPECT_TRUE(all_close(checkpointed(*a, graph, nesterov), towards(w0, mean, 0.7), 1e-12, 1e-12));
  EXPECT_EQ(replica_params(*a, 0), before);
}

TEST(ModelAveragingVariants, BmufWithoutMomentumEveryStepIsSynchronous) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto bmuf = variant_engine(graph, {.kind = Averaging::bmuf, .every = 1, .block_momentum = 0.0});
  const auto sync = variant_engine(graph, {});
  for (uint64_t s = 0; s < 3; ++s) {
    const double expected = variant_step(*sync, graph, s);
    EXPECT_NEAR(variant_step(*bmuf, graph, s), expected, 1e-12 * std::abs(expected)) << "step " << s;
  }
  EXPECT_TRUE(all_close(replica_params(*bmuf, 1), replica_params(*sync, 0), 1e-12, 1e-12));
}

TEST(ModelAveragingVariants, EasgdPullsReplicasAndCentreTogether) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto apart = variant_engine(graph, {.kind = Averaging::periodic, .every = 1000});  // never meets here
  const ModelAveraging elastic{.kind = Averaging::easgd, .every = 2, .elastic_beta = 0.9};
  const auto easgd = variant_engine(graph, elastic);
  const Vec w0 = replica_params(*easgd, 0);
  for (uint64_t s = 0; s < 2; ++s) {
    variant_step(*apart, graph, s);
    variant_step(*easgd, graph, s);
  }
  const Vec x0 = replica_params(*apart, 0), x1 = replica_params(*apart, 1);
  const double alpha = 0.9 / 2;
  // x_i -= alpha (x_i - centre); centre += alpha sum_i (x_i - centre), from the values before.
  EXPECT_TRUE(all_close(replica_params(*easgd, 0), towards(x0, w0, alpha), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(replica_params(*easgd, 1), towards(x1, w0, alpha), 1e-12, 1e-12));
  const Vec centre = towards(w0, towards(x0, x1, 0.5), 2 * alpha);
  const Vec before = replica_params(*easgd, 1);
  EXPECT_TRUE(all_close(checkpointed(*easgd, graph, elastic), centre, 1e-12, 1e-12));
  EXPECT_EQ(replica_params(*easgd, 1), before);  // the replica goes on from its own parameters
}

TEST(ModelAveragingVariants, RingAndTreeExchangesTrainTheSame) {
  const Graph graph = dp_mlp(DType::f64, 8);
  const auto ring = variant_engine(graph, {.kind = Averaging::bmuf, .every = 2}, 4);
  const auto tree = variant_engine(
      graph, {.kind = Averaging::bmuf, .every = 2, .exchange = ExchangeKind::tree, .nodes = {0, 0, 1, 1}}, 4);
  for (uint64_t s = 0; s < 4; ++s) {
    const double expected = variant_step(*ring, graph, s);
    EXPECT_NEAR(variant_step(*tree, graph, s), expected, 1e-12 * std::abs(expected)) << "step " << s;
  }
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(all_close(replica_params(*tree, r), replica_params(*ring, r), 1e-12, 1e-12)) << r;
  EXPECT_GT(tree->averaging_bytes_sent(0), 0);
}

// x [16, 3, 32, 32] -> flatten -> linear 64 -> relu -> linear 10 -> cross entropy.
Graph shapes_mlp(int64_t batch) {
  layers::GraphBuilder g;
  ValueId x = g.flatten(g.input("x", {batch, 3, 32, 32}), "flatten");
  const ValueId labels = g.input("labels", {batch}, DType::i64);
  x = g.relu(g.linear(x, 64, "fc1"), "act1");
  const ValueId logits = g.linear(x, data::ShapesDataset::kClasses, "head");
  g.output(g.softmax_cross_entropy(logits, labels, "loss"));
  g.output(logits);
  return g.build();
}

TEST(ModelAveragingVariants, BmufAndEasgdFitShapesImagesFarAboveChance) {
  // 64 shapes images, fitted in 160 steps and evaluated on the same images (chance: 10%): an
  // averaging rule that pulled the replicas the wrong way would not fit them. The learning rate suits
  // inputs of unit deviation (measured normalisation): 0.01 lets BMUF's block momentum overshoot.
  const Graph graph = shapes_mlp(16);
  const data::ShapesDataset images(data::Split::train, 3, 64);
  TrainConfig config;
  config.steps = 160;
  config.batch_size = 16;
  config.augment = false;  // the same images every epoch
  config.device = "cpu";
  config.workers = 1;
  config.eval_every = 0;
  config.log_every = 1000;
  config.optimizer = {{"type", "sgd"}, {"momentum", 0.9}};
  config.lr_schedule = {{"type", "constant"}, {"base_lr", 0.005}};
  for (const char* variant : {"bmuf", "easgd"}) {
    ParallelConfig parallel;
    parallel.data_parallel = 2;
    parallel.model_averaging = parse_averaging(variant);
    parallel.average_every = 4;
    const std::unique_ptr<DataParallelEngine> e = make_data_parallel_engine(graph, config, parallel);
    const TrainSummary s = Trainer(graph, config, images, nullptr, *e).run(nullptr);
    EXPECT_EQ(s.steps, 160);
    EXPECT_EQ(e->averaging_meetings(), 40);
    const EvalResult eval = e->evaluate(images, 16, 1);
    EXPECT_GT(eval.top1, 0.6) << variant;
    EXPECT_LT(eval.loss, 0.5) << variant << " top-1 " << eval.top1;  // fitted, not diverging
  }
}

}  // namespace
}  // namespace baton::parallel
