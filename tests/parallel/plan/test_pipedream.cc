// PipeDream's profiles and objective (parallel/plan/pipedream_graph.h, parallel/plan/pipedream_objective.h): graph.txt
// read as PipeDream reads it, bad files named with line and field, optima worked out by hand, and on
// PipeDream's shipped VGG-16 and ResNet-50 profiles the optimum PipeDream's own optimiser prints.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "parallel/plan/pipedream_objective.h"
#include "runtime/core/error.h"

namespace baton::parallel {
namespace {

const char* const kSmallGraph =
    "node1 -- Input -- forward_compute_time=5.000, backward_compute_time=0.000, activation_size=100.000, "
    "parameter_size=0.000\n"
    "node3 -- ReLU(inplace) -- forward_compute_time=1.000, backward_compute_time=1.000, activation_size=[10.000; "
    "20.000], parameter_size=0.000\n"
    "node2 -- Conv2d(3, 8, kernel_size=(3, 3)) -- forward_compute_time=2.500, backward_compute_time=3.000, "
    "activation_size=30.000, parameter_size=64.000\n"
    "node4 -- __getitem__(0) -- forward_compute_time=0.100, backward_compute_time=0.000, activation_size=1.000, "
    "parameter_size=0.000\n"
    "\tnode1 -- node2\n"
    "\tnode2 -- node3\n"
    "\tnode3 -- node4\n";

TEST(PipeDreamGraph, DropsInputAndGetitemNodesAndSortsTopologically) {
  const PipeDreamGraph g = parse_pipedream_graph(kSmallGraph, "small.txt");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].id, "node2");
  EXPECT_EQ(g.nodes[0].description, "Conv2d(3, 8, kernel_size=(3, 3))");
  EXPECT_DOUBLE_EQ(g.nodes[0].forward_ms, 2.5);
  EXPECT_DOUBLE_EQ(g.nodes[0].backward_ms, 3.0);
  EXPECT_DOUBLE_EQ(g.nodes[0].parameter_bytes, 64.0);
  EXPECT_EQ(g.nodes[1].id, "node3");
  EXPECT_DOUBLE_EQ(g.nodes[1].activation_bytes, 30.0);  // the list, summed
  EXPECT_EQ(g.nodes[0].consumers, std::vector<int>{1});
  EXPECT_EQ(g.nodes[1].producers, std::vector<int>{0});
  EXPECT_TRUE(g.nodes[1].consumers.empty());  // its __getitem__ consumer is dropped
  EXPECT_EQ(g.input_consumers, std::vector<int>{0});

  const Profile p = pipedream_profile(g, 10);
  EXPECT_EQ(p.source, "pipedream:small.txt");
  ASSERT_EQ(p.num_nodes(), 2);
  EXPECT_DOUBLE_EQ(p.fwd_ms(0, 10), 2.5);
  EXPECT_EQ(p.nodes[0].param_bytes, 64);
  ASSERT_EQ(p.values.size(), 3u);  // the input, node2's output, node3's output
  EXPECT_EQ(p.values[0].producer, -1);
  EXPECT_EQ(p.values[1].bytes_per_sample, 3);  // 30 bytes for the mini-batch of 10
  EXPECT_TRUE(p.values[2].graph_output);

  const PipeDreamGraph back = pipedream_graph_of(p, 10);
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(back.nodes[1].activation_bytes, 30.0);
  EXPECT_EQ(back.nodes[0].consumers, std::vector<int>{1});
  EXPECT_EQ(back.input_consumers, std::vector<int>{0});
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    parse_pipedream_graph(text, "bad.txt");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(PipeDreamGraph, BadFilesNameTheLineAndTheField) {
  const std::string node_a =
      "a1 -- Conv -- forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=1\n";
  expect_error(node_a +
                   "b2 -- Conv -- forward_compute_time=x, backward_compute_time=1, activation_size=1, "
                   "parameter_size=1\n",
               "bad.txt:2: field 'forward_compute_time': expected a finite number >= 0, got 'x'");
  expect_error(node_a +
                   "b2 -- Conv -- forward_compute_time=1, backward_compute_time=-1, activation_size=1, "
                   "parameter_size=1\n",
               "bad.txt:2: field 'backward_compute_time'");
  expect_error(node_a + "b2 -- Conv -- forward_compute_time=1, activation_size=1, parameter_size=1\n",
               "bad.txt:2: expected 4 fields");
  expect_error(node_a + "b2 -- Conv -- forward_compute_time=1, backward=1, activation_size=1, parameter_size=1\n",
               "bad.txt:2: expected 'backward_compute_time=<number>'");
  expect_error(node_a + "just words\n", "bad.txt:2: expected a node line");
  expect_error(node_a + "\ta1 -- zz\n", "bad.txt:2: edge names node 'zz', which no earlier line defines");
  expect_error(node_a + node_a, "bad.txt:2: node 'a1' appears twice");
  expect_error(node_a +
                   "b2 -- Conv -- forward_compute_time=1, backward_compute_time=1, activation_size=1, "
                   "parameter_size=1\n\ta1 -- b2\n\tb2 -- a1\n",
               "bad.txt: the edges form a cycle");
  expect_error("", "bad.txt: no node lines");
  EXPECT_THROW(read_pipedream_graph("/nonexistent/graph.txt"), Error);
}

// a -> b -> c with a's 2 GB of parameters: on 2 workers at 1 GB/s, replicating everything costs an
// all-reduce of 4·1·2e9 / (1e9·2) = 4 s, so (4 + 4) / 2 = 4 s; the split after b gives max(a + b, c) =
// 2 s. With activation transfers costed (b sends 1.5 GB: 2·1.5e9 / 1e9 = 3 s) the split after a wins
// at 3 s, the first of two equal optima found.
PipeDreamGraph chain() {
  const char* text =
      "n1 -- A -- forward_compute_time=500, backward_compute_time=500, activation_size=500000000, "
      "parameter_size=2000000000\n"
      "n2 -- B -- forward_compute_time=400, backward_compute_time=600, activation_size=1500000000, "
      "parameter_size=0\n"
      "n3 -- C -- forward_compute_time=1000, backward_compute_time=1000, activation_size=0, parameter_size=0\n"
      "\tn1 -- n2\n\tn2 -- n3\n";
  return parse_pipedream_graph(text, "chain.txt");
}

TEST(PipeDreamObjective, ChainOptimaWorkedOutByHand) {
  PipeDreamSettings s;
  s.workers = 2;
  s.bandwidth_bytes_per_s = 1e9;
  PipeDreamPlan plan = pipedream_optimum(chain(), s);
  EXPECT_DOUBLE_EQ(plan.pipeline_time_s, 2.0);
  EXPECT_DOUBLE_EQ(plan.single_worker_time_s, 4.0);
  EXPECT_DOUBLE_EQ(plan.data_parallel_time_s, 4.0);
  EXPECT_EQ(plan.states, 3);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.stages[1].nodes, std::vector<int>{2});
  EXPECT_EQ(plan.stages[0].replicas + plan.stages[1].replicas, 2);

  s.activation_compression_ratio = 1.0;
  plan = pipedream_optimum(chain(), s);
  EXPECT_DOUBLE_EQ(plan.pipeline_time_s, 3.0);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].nodes, std::vector<int>{0});

  s.activation_compression_ratio = 2.0;  // b's transfer 1.5 s: the split after b again, 2 s
  EXPECT_DOUBLE_EQ(pipedream_optimum(chain(), s).pipeline_time_s, 2.0);

  s.workers = 1;
  plan = pipedream_optimum(chain(), s);
  EXPECT_DOUBLE_EQ(plan.pipeline_time_s, 4.0);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].replicas, 1);
}

// The chain under PipeDream's memory limit (a worker stashes ceil((workers - used) / replicas) copies of its
// stage's activations and parameters): with 3 GB, one worker cannot hold a + b (2 + 1.5 + 0.5 GB, one copy in
// flight), so the split after b is out and the split after a wins at max(1, 1 + 2) = 3 s; with 1 GB no first
// stage fits and only the whole chain on both workers is left (PipeDream never refuses it: nothing in flight),
// 4 s. A straight pipeline of 3 workers is [a] [b] [c] at max(1, 1, 2) = 2 s; of 4 workers, impossible.
TEST(PipeDreamObjective, ChainMemoryLimitAndStraightPipelineWorkedOutByHand) {
  PipeDreamSettings s;
  s.workers = 2;
  s.memory_bytes_per_worker = 4e9;  // a + b fits exactly
  EXPECT_DOUBLE_EQ(pipedream_optimum(chain(), s).pipeline_time_s, 2.0);
  s.memory_bytes_per_worker = 3e9;
  PipeDreamPlan plan = pipedream_optimum(chain(), s);
  EXPECT_DOUBLE_EQ(plan.pipeline_time_s, 3.0);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].nodes, std::vector<int>{0});
  s.memory_bytes_per_worker = 1e9;
  plan = pipedream_optimum(chain(), s);
  EXPECT_DOUBLE_EQ(plan.pipeline_time_s, 4.0);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].replicas, 2);

  s.memory_bytes_per_worker.reset();
  s.straight_pipeline = true;
  s.workers = 3;
  plan = pipedream_optimum(chain(), s);
  EXPECT_DOUBLE_EQ(plan.pipeline_time_s, 2.0);
  ASSERT_EQ(plan.stages.size(), 3u);
  for (const PipeDreamStage& stage : plan.stages) EXPECT_EQ(stage.replicas, 1);
  s.workers = 4;
  try {
    pipedream_optimum(chain(), s);
    ADD_FAILURE() << "a straight pipeline of 4 workers over 3 nodes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "chain.txt: a straight pipeline of 4 workers needs as many stages, and the graph has only 3 nodes"),
              std::string::npos)
        << e.what();
  }
}

// Every plan's replicas add up to exactly the workers, and every node is in one stage.
void expect_plan_uses_every_worker(const PipeDreamGraph& g, const PipeDreamPlan& plan, int workers) {
  int replicas = 0;
  size_t nodes = 0;
  for (const PipeDreamStage& stage : plan.stages) {
    replicas += stage.replicas;
    nodes += stage.nodes.size();
  }
  EXPECT_EQ(replicas, workers);
  EXPECT_EQ(nodes, g.nodes.size());
}

struct Reference {
  const char* model;
  int workers;
  double bandwidth;
  double ratio;            // 0: activation transfers not costed
  double pipeline_time_s;  // 0: no plan (PipeDream's A[0][last state][N - 1] stays None)
  double data_parallel_time_s;
  double memory_bytes = 0;  // PipeDream's --use_memory_constraint --memory_size (0: no limit)
  bool straight = false;    // PipeDream's --straight_pipeline
};

// What PipeDream's optimiser (optimizer_graph_hierarchical.py at commit 11c40c0, run with Python 3 on
// these files: -n N -b B [--activation_compression_ratio 1]) returns as pipeline_parallel_total_time and
// data_parallel_total_time. Its sums run over Python sets, so its last bits vary from run to run.
constexpr Reference kPipeDreamOptima[] = {
    {"vgg16", 4, 1e9, 0, 0.17573262399999998, 0.5832063820000001},
    {"vgg16", 4, 1e9, 1, 0.205520896, 0.5832063820000001},
    {"vgg16", 4, 1e10, 0, 0.17017906239999994, 0.20964101320000006},
    {"vgg16", 4, 1e10, 1, 0.1701790624, 0.20964101320000003},
    {"vgg16", 8, 1e9, 0, 0.09351323, 0.32619257700000004},
    {"vgg16", 8, 1e9, 1, 0.10383317028571429, 0.32619257700000004},
    {"vgg16", 8, 1e10, 0, 0.08992645988571428, 0.10827944520000002},
    {"vgg16", 8, 1e10, 1, 0.08992645988571428, 0.10827944520000002},
    {"resnet50", 4, 1e9, 0, 0.11149699999999993, 0.187525846},
    {"resnet50", 4, 1e9, 1, 0.162880924, 0.18752584599999997},
    {"resnet50", 4, 1e10, 0, 0.11149699999999993, 0.11852185959999999},
    {"resnet50", 4, 1e10, 1, 0.11149700000000001, 0.11852185959999997},
    {"resnet50", 8, 1e9, 0, 0.056315323999999986, 0.10015218099999999},
    {"resnet50", 8, 1e9, 1, 0.092012272, 0.10015218099999998},
    {"resnet50", 8, 1e10, 0, 0.055915000000000076, 0.059899855599999996},
    {"resnet50", 8, 1e10, 1, 0.05658320919999998, 0.05989985559999999},
    // With --use_memory_constraint --memory_size M and --straight_pipeline: the values of PipeDream's
    // compute_partitioning (commit 11c40c0: the memory check of both loops, the straight mode's single replica),
    // worked out by a standalone Python 3 transcription of its single-level optimiser over these graph.txt files,
    // independent of baton (tools/pipedream_reference.py), which first reproduced every value above to 1e-15 relative.
    {"vgg16", 4, 1e9, 0, 0.18650614000000004, 0.583206382, 12e9},
    {"vgg16", 4, 1e9, 0, 0.436945, 0.583206382, 4e9},
    {"vgg16", 4, 1e9, 1, 0.583206382, 0.583206382, 8e9},  // only the whole model on the 4 workers fits
    {"vgg16", 8, 1e9, 0, 0.13275199999999998, 0.326192577, 6e9},
    {"vgg16", 8, 1e10, 1, 0.09738535733333335, 0.10827944519999999, 8e9},
    {"resnet50", 4, 1e9, 0, 0.15836099999999992, 0.18752584599999994, 8e9},
    {"resnet50", 4, 1e9, 1, 0.18752584599999994, 0.18752584599999994, 12e9},
    {"resnet50", 8, 1e9, 0, 0.10015218099999998, 0.10015218099999998, 6e9},
    {"vgg16", 4, 1e9, 0, 0.21645000000000003, 0.583206382, 0, true},
    {"vgg16", 4, 1e9, 1, 0.411041792, 0.583206382, 0, true},
    {"vgg16", 8, 1e10, 0, 0.15953100000000003, 0.10827944519999999, 0, true},
    {"resnet50", 4, 1e9, 1, 0.2581489999999999, 0.18752584599999994, 0, true},
    {"resnet50", 8, 1e9, 0, 0.05668399999999997, 0.10015218099999998, 0, true},
    {"resnet50", 8, 1e10, 1, 0.0822083584, 0.05989985559999998, 0, true},
    {"vgg16", 4, 1e9, 0, 0.241, 0.583206382, 8e9, true},
    {"resnet50", 8, 1e9, 0, 0.28772299999999984, 0.10015218099999998, 4e9, true},
    {"vgg16", 4, 1e9, 0, 0, 0.583206382, 4e9, true},
    {"resnet50", 8, 1e9, 0, 0, 0.10015218099999998, 2e9, true},
};

TEST(PipeDreamObjective, ShippedProfilesReachPipeDreamsOptimum) {
  for (const Reference& r : kPipeDreamOptima) {
    const PipeDreamGraph g =
        read_pipedream_graph(std::string(BATON_TEST_DATA_DIR) + "/pipedream-profiles/" + r.model + "/graph.txt");
    PipeDreamSettings s;
    s.workers = r.workers;
    s.bandwidth_bytes_per_s = r.bandwidth;
    if (r.ratio > 0) s.activation_compression_ratio = r.ratio;
    if (r.memory_bytes > 0) s.memory_bytes_per_worker = r.memory_bytes;
    s.straight_pipeline = r.straight;
    const std::string what = std::string(r.model) + ", " + std::to_string(r.workers) + " workers, " +
                             std::to_string(r.bandwidth) + " B/s, ratio " + std::to_string(r.ratio) + ", memory " +
                             std::to_string(r.memory_bytes) + (r.straight ? ", straight" : "");
    if (r.pipeline_time_s == 0) {
      try {
        pipedream_optimum(g, s);
        ADD_FAILURE() << "no error for " << what;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("PipeDream's optimiser finds no straight pipeline of exactly " +
                                             std::to_string(r.workers) +
                                             " workers that keeps each worker's stashed activations and parameters "
                                             "within the memory limit of "),
                  std::string::npos)
            << e.what();
      }
      continue;
    }
    const PipeDreamPlan plan = pipedream_optimum(g, s);
    EXPECT_NEAR(plan.pipeline_time_s, r.pipeline_time_s, 1e-9 * r.pipeline_time_s) << what;
    EXPECT_NEAR(plan.data_parallel_time_s, r.data_parallel_time_s, 1e-9 * r.data_parallel_time_s) << what;
    EXPECT_EQ(plan.states, std::string(r.model) == "vgg16" ? 40 : 240) << what;  // PipeDream's "Total number of states"
    expect_plan_uses_every_worker(g, plan, r.workers);
    if (r.straight) {
      EXPECT_EQ(plan.stages.size(), static_cast<size_t>(r.workers)) << what;
      for (const PipeDreamStage& stage : plan.stages) EXPECT_EQ(stage.replicas, 1) << what;
    }
  }
}

}  // namespace
}  // namespace baton::parallel
