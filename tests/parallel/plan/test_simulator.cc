// Simulator tests: the GPipe bubble formula, 1F1B in-flight and memory, transfer and all-reduce
// costs computed by hand, bucketed overlap for data parallelism, hybrid overlap, plan mismatches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "parallel/plan/cost_model.h"
#include "parallel/plan/planner.h"
#include "parallel/plan/schedule.h"
#include "parallel/plan/simulator.h"
#include "tests/parallel/plan/simulator_fixtures.h"
#include "tests/support/test_support.h"

namespace baton::parallel {
namespace {

using fixtures::chain_plan;
using fixtures::chain_profile;
using fixtures::ChainSpec;

SimulationOptions free_options() {
  SimulationOptions o;
  o.free_communication = true;
  return o;
}

Schedule schedule_for(ScheduleKind kind, const Plan& plan, const Profile& profile) {
  return plan_schedule(plan, profile, kind);
}

// The events of one category (and stage, when >= 0), in start order.
std::vector<TraceEvent> events_of(const SimulationResult& r, const std::string& category, int stage = -1) {
  std::vector<TraceEvent> out;
  for (const TraceEvent& e : r.events) {
    if (e.category == category && (stage < 0 || e.args.at("stage").get<int>() == stage)) out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_us < b.start_us; });
  return out;
}

double end_us(const TraceEvent& e) { return e.start_us + e.duration_us; }

TEST(SimulatorTest, GPipeBubbleIsTheFillDrainFormula) {
  // One node per stage, 1 sample per micro-batch: every stage takes f = 1 ms forward, b = 2 ms backward.
  for (int stages = 1; stages <= 8; ++stages) {
    const Profile profile = chain_profile({.nodes = stages});
    const Cluster cluster = fixtures::test_cluster(stages);
    for (int m = 1; m <= 16; ++m) {
      const Plan plan = chain_plan(profile, stages, m, m);
      const SimulationResult r =
          simulate(plan, schedule_for(ScheduleKind::gpipe, plan, profile), profile, cluster, free_options());
      const double expected_bubble = static_cast<double>(stages - 1) / (m + stages - 1);
      EXPECT_NEAR(r.bubble_fraction, expected_bubble, 1e-9) << "S=" << stages << " M=" << m;
      EXPECT_NEAR(r.step_ms, (m + stages - 1) * 3.0, 1e-9) << "S=" << stages << " M=" << m;
      EXPECT_NEAR(r.throughput, m / r.step_ms * 1000.0, 1e-9);
      ASSERT_EQ(r.stage_utilisation.size(), static_cast<size_t>(stages));
      EXPECT_NEAR(r.stage_utilisation[0], m * 3.0 / r.step_ms, 1e-9);
      EXPECT_NEAR(r.compute_ms, stages * m * 3.0, 1e-9);
      EXPECT_EQ(r.communication_ms, 0.0);
      EXPECT_EQ(r.peak_in_flight, std::vector<int>(stages, m));
    }
  }
}

TEST(SimulatorTest, OneFOneBMatchesGPipeTimeWithFewerMicroBatchesInFlight) {
  const int stages = 4;
  const Profile profile = chain_profile({.nodes = 8});
  const Cluster cluster = fixtures::test_cluster(stages);
  for (const int m : {2, 4, 8, 12}) {
    const Plan plan = chain_plan(profile, stages, m, m);
    const SimulationResult gpipe =
        simulate(plan, schedule_for(ScheduleKind::gpipe, plan, profile), profile, cluster, free_options());
    const SimulationResult ofob =
        simulate(plan, schedule_for(ScheduleKind::one_f_one_b, plan, profile), profile, cluster, free_options());
    EXPECT_NEAR(ofob.step_ms, gpipe.step_ms, 1e-9) << "M=" << m;
    EXPECT_NEAR(ofob.step_ms, (m + stages - 1) * 6.0, 1e-9) << "M=" << m;
    EXPECT_NEAR(ofob.bubble_fraction, gpipe.bubble_fraction, 1e-9) << "M=" << m;
    for (int s = 0; s < stages; ++s) {
      EXPECT_EQ(ofob.peak_in_flight[s], std::min(stages - s, m)) << "stage " << s << " M=" << m;
      EXPECT_EQ(gpipe.peak_in_flight[s], m);
      const int64_t expected = stage_memory(profile, plan.stages[s].nodes, 1.0, std::min(stages - s, m)).total();
      EXPECT_EQ(ofob.peak_memory_bytes[s], expected);
      if (stages - s < m) {
        EXPECT_LT(ofob.peak_memory_bytes[s], gpipe.peak_memory_bytes[s]) << "stage " << s << " M=" << m;
      } else {
        EXPECT_EQ(ofob.peak_memory_bytes[s], gpipe.peak_memory_bytes[s]);
      }
    }
  }
}

TEST(SimulatorTest, SlowLinkAddsTheTransferTimeBothWays) {
  // Two stages on devices 0 and 1, one micro-batch of 16 samples; 1 MB per sample crosses the cut.
  const Profile profile = chain_profile({.nodes = 2, .act_bytes = 1'000'000});
  const double bandwidth_gbs = 2.0;
  const double latency_us = 30.0;
  const Cluster cluster = fixtures::test_cluster(2, bandwidth_gbs, latency_us);
  const Plan plan = chain_plan(profile, 2, 16, 1);
  const Schedule schedule = schedule_for(ScheduleKind::gpipe, plan, profile);
  const SimulationResult free_run = simulate(plan, schedule, profile, cluster, free_options());
  const SimulationResult slow = simulate(plan, schedule, profile, cluster);
  // 16 MB at 2 GB/s = 8 ms, plus 30 us latency; once for the activation, once for its gradient.
  const double transfer_ms = 16e6 / (bandwidth_gbs * 1e9) * 1e3 + latency_us / 1e3;
  EXPECT_NEAR(free_run.step_ms, 16 * 3.0 * 2, 1e-9);
  EXPECT_NEAR(slow.step_ms - free_run.step_ms, 2 * transfer_ms, 1e-9);
  EXPECT_NEAR(slow.communication_ms, 2 * transfer_ms, 1e-9);
  const std::vector<TraceEvent> transfers = events_of(slow, "transfer");
  ASSERT_EQ(transfers.size(), 2u);
  EXPECT_EQ(transfers[0].name, "send act 0 -> s1");
  EXPECT_NEAR(transfers[0].duration_us, transfer_ms * 1e3, 1e-6);
  EXPECT_EQ(transfers[0].args.at("bytes").get<int64_t>(), 16'000'000);
  EXPECT_EQ(slow.lanes.at(transfers[0].thread).name, "link 0->1");
  EXPECT_EQ(slow.lanes.at(transfers[1].thread).name, "link 1->0");
  // The receiver's forward starts when the activation has arrived.
  const std::vector<TraceEvent> forwards = events_of(slow, "forward", 1);
  ASSERT_EQ(forwards.size(), 1u);
  EXPECT_NEAR(forwards[0].start_us, end_us(transfers[0]), 1e-6);
}

TEST(SimulatorTest, TransfersOnOneLinkQueueInOrder) {
  // Two micro-batches of one sample: stage 0 sends the second activation 1 ms after the first, while
  // the link still carries the first for T = 8 ms, so the second waits for it.
  const Profile profile = chain_profile({.nodes = 2, .act_bytes = 8'000'000});
  const Cluster cluster = fixtures::test_cluster(2, 1.0, 0.0);
  const Plan plan = chain_plan(profile, 2, 2, 2);
  const SimulationResult r = simulate(plan, schedule_for(ScheduleKind::gpipe, plan, profile), profile, cluster);
  const double t = 8.0;
  const std::vector<TraceEvent> sends = events_of(r, "transfer", 0);
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_NEAR(sends[0].start_us, 1e3, 1e-6);
  EXPECT_NEAR(sends[1].start_us, (1 + t) * 1e3, 1e-6);  // issued at 2 ms, waits for the link
  EXPECT_NEAR(end_us(sends[1]), (1 + 2 * t) * 1e3, 1e-6);
  const std::vector<TraceEvent> forwards = events_of(r, "forward", 1);
  ASSERT_EQ(forwards.size(), 2u);
  EXPECT_NEAR(forwards[1].start_us, (1 + 2 * t) * 1e3, 1e-6);
}

// Data parallelism: one stage of 8 nodes on 4 replicas, 4 micro-batches of 8 samples (one per replica).
struct DataParallelCase {
  Profile profile = chain_profile(
      {.nodes = 8, .fwd_ms = 0.1, .bwd_ms = 0.2, .param_bytes = 4'000'000, .optimizer_ms_per_param_byte = 1e-8});
  Cluster cluster = fixtures::test_cluster(4, 10.0, 10.0);
  Plan plan = chain_plan(profile, 1, 32, 4, 4);
  Schedule schedule = schedule_for(ScheduleKind::gpipe, plan, profile);
  double fwd = 8 * 8 * 0.1;  // nodes x samples x ms
  double node_bwd = 8 * 0.2;
  double bwd = 8 * node_bwd;
  double optimizer = 32e6 * 1e-8;
  std::vector<int> devices{0, 1, 2, 3};
};

TEST(SimulatorTest, DataParallelWithoutBucketsIsComputeThenAllReduceThenOptimizer) {
  const DataParallelCase c;
  const double allreduce = c.cluster.allreduce_ms(32'000'000, c.devices);
  // Ring over 4 devices: 2 * 3/4 * 32 MB / 10 GB/s + 2 * 3 * 10 us.
  EXPECT_NEAR(allreduce, 1.5 * 32e6 / 10e9 * 1e3 + 6 * 0.01, 1e-9);
  const SimulationResult r = simulate(c.plan, c.schedule, c.profile, c.cluster);
  EXPECT_NEAR(r.step_ms, c.fwd + c.bwd + allreduce + c.optimizer, 1e-9);
  const std::vector<TraceEvent> reduces = events_of(r, "allreduce");
  ASSERT_EQ(reduces.size(), 1u);
  EXPECT_EQ(reduces[0].name, "all-reduce s0");
  EXPECT_NEAR(reduces[0].start_us, (c.fwd + c.bwd) * 1e3, 1e-6);
  EXPECT_NEAR(r.compute_ms, 4 * (c.fwd + c.bwd + c.optimizer), 1e-9);
  EXPECT_NEAR(r.communication_ms, 4 * allreduce, 1e-9);
  EXPECT_NEAR(r.bubble_fraction, 0.0, 1e-12);
}

TEST(SimulatorTest, DataParallelBucketsOverlapTheAllReduceWithBackward) {
  // 10 GB/s: each bucket finishes before the next is ready; 1 GB/s: the buckets queue.
  for (const double bandwidth : {10.0, 1.0}) {
    SCOPED_TRACE(bandwidth);
    DataParallelCase c;
    c.cluster = fixtures::test_cluster(4, bandwidth, 10.0);
    const double full = c.cluster.allreduce_ms(32'000'000, c.devices);
    SimulationOptions options;
    options.bucket_bytes = 8'000'000;  // two nodes per bucket
    const SimulationResult r = simulate(c.plan, c.schedule, c.profile, c.cluster, options);
    const double compute = c.fwd + c.bwd;
    EXPECT_LT(r.step_ms, compute + full + c.optimizer);
    EXPECT_GE(r.step_ms, std::max(compute, full) + c.optimizer);
    // By hand: bucket k is ready after 2(k+1) nodes' backward; the buckets queue on one lane.
    const double bucket = c.cluster.allreduce_ms(8'000'000, c.devices);
    double lane = 0;
    for (int k = 0; k < 4; ++k) lane = std::max(lane, c.fwd + 2 * (k + 1) * c.node_bwd) + bucket;
    EXPECT_NEAR(r.step_ms, lane + c.optimizer, 1e-9);
    const std::vector<TraceEvent> reduces = events_of(r, "allreduce");
    ASSERT_EQ(reduces.size(), 4u);
    const std::vector<TraceEvent> backward = events_of(r, "backward");
    ASSERT_EQ(backward.size(), 4u);                       // one per replica, at the same time
    EXPECT_LT(reduces[0].start_us, end_us(backward[0]));  // overlapped with backward
    EXPECT_EQ(reduces[3].args.at("bucket").get<int>(), 3);
    // Buckets larger than the stage: one bucket, no overlap, as without buckets.
    options.bucket_bytes = int64_t{1} << 40;
    EXPECT_NEAR(simulate(c.plan, c.schedule, c.profile, c.cluster, options).step_ms, compute + full + c.optimizer,
                1e-9);
  }
}

TEST(SimulatorTest, HybridAllReduceOverlapsTheEarlierStagesBackward) {
  const int groups = 2;
  const int stages = 4;
  const int m = 8;
  const Profile profile = chain_profile({.nodes = 8, .param_bytes = 50'000'000, .optimizer_ms_per_param_byte = 1e-9});
  const Cluster cluster = fixtures::test_cluster(groups * stages, 50.0, 5.0);
  const Plan plan = chain_plan(profile, stages, groups * m * 2, groups * m, groups);  // m per group
  const SimulationResult r = simulate(plan, schedule_for(ScheduleKind::one_f_one_b, plan, profile), profile, cluster);
  EXPECT_GT(r.step_ms, 0.0);
  EXPECT_GT(r.bubble_fraction, 0.0);
  EXPECT_LT(r.bubble_fraction, 1.0);
  const std::vector<TraceEvent> stage0_backward = events_of(r, "backward", 0);
  ASSERT_EQ(stage0_backward.size(), static_cast<size_t>(groups * m));
  const double stage0_done = end_us(stage0_backward.back());
  for (int s = 0; s < stages; ++s) {
    const std::vector<TraceEvent> reduce = events_of(r, "allreduce", s);
    ASSERT_EQ(reduce.size(), 1u) << "stage " << s;
    const std::vector<int> devices{s, s + stages};
    EXPECT_NEAR(reduce[0].duration_us, cluster.allreduce_ms(100'000'000, devices) * 1e3, 1e-6);
    EXPECT_GE(reduce[0].start_us, end_us(events_of(r, "backward", s).back()) - 1e-9);
    const std::vector<TraceEvent> optimizer = events_of(r, "optimizer", s);
    ASSERT_EQ(optimizer.size(), static_cast<size_t>(groups));  // each replica's, after the all-reduce
    for (const TraceEvent& step : optimizer) EXPECT_GE(step.start_us, end_us(reduce[0]) - 1e-9);
  }
  // The last stage's gradients are final first: its all-reduce runs while stage 0 still computes.
  EXPECT_LT(events_of(r, "allreduce", stages - 1)[0].start_us, stage0_done);
  EXPECT_EQ(r.peak_in_flight, (std::vector<int>{4, 3, 2, 1}));
}

TEST(SimulatorTest, InterleavingShrinksTheBubble) {
  const Profile profile = chain_profile({.nodes = 8});
  const Cluster cluster = fixtures::test_cluster(2);
  const Plan plain = chain_plan(profile, 2, 4, 4);
  const Plan interleaved = chain_plan(profile, 4, 4, 4, 1, 2);
  const SimulationResult a =
      simulate(plain, schedule_for(ScheduleKind::one_f_one_b, plain, profile), profile, cluster, free_options());
  const SimulationResult b = simulate(interleaved, schedule_for(ScheduleKind::interleaved, interleaved, profile),
                                      profile, cluster, free_options());
  EXPECT_LT(b.bubble_fraction, a.bubble_fraction);
  EXPECT_LT(b.step_ms, a.step_ms);
  EXPECT_NEAR(b.compute_ms, a.compute_ms, 1e-9);
  // Forward of micro-batch 0 in chunk 2 (stage 2, on device 0 again) is named with its stage.
  EXPECT_TRUE(std::any_of(b.events.begin(), b.events.end(),
                          [](const TraceEvent& e) { return e.name == "F0 s2" && e.thread == 0; }));
}

TEST(SimulatorTest, RejectsSchedulesThatDoNotFitThePlan) {
  const Profile profile = chain_profile({.nodes = 4});
  const Cluster cluster = fixtures::test_cluster(4);
  const Plan plan = chain_plan(profile, 2, 4, 2);
  const auto consumers = stage_consumers(plan, profile);
  EXPECT_ERROR_MENTIONS("micro-batches",
                        simulate(plan, make_schedule(ScheduleKind::gpipe, 2, 1, 4, consumers), profile, cluster));
  EXPECT_ERROR_MENTIONS("stages", simulate(plan, make_schedule(ScheduleKind::gpipe, 4, 1, 2), profile, cluster));
  Schedule broken = make_schedule(ScheduleKind::gpipe, 2, 1, 2, consumers);
  broken.programs[1].erase(broken.programs[1].begin());  // a receive goes missing
  EXPECT_THROW(simulate(plan, broken, profile, cluster), Error);
  const Plan replicated = chain_plan(profile, 2, 4, 2, 2);
  EXPECT_ERROR_MENTIONS("replica",
                        simulate(replicated, make_schedule(ScheduleKind::gpipe, 2, 1, 2, consumers), profile, cluster));
  EXPECT_ERROR_MENTIONS(
      "all_reduce",
      simulate(replicated, make_schedule(ScheduleKind::gpipe, 2, 1, 2, consumers, false, {2, 2}), profile, cluster));
  Plan far = plan;
  far.stages[1].devices = {9};
  EXPECT_ERROR_MENTIONS("device 9",
                        simulate(far, make_schedule(ScheduleKind::gpipe, 2, 1, 2, consumers), profile, cluster));
}

TEST(SimulatorTest, SingleReplicaHasNoAllReduceAndTraceCanBeOff) {
  const Profile profile = chain_profile({.nodes = 4, .optimizer_ms_per_param_byte = 1e-3});
  const Cluster cluster = fixtures::test_cluster(2);
  const Plan plan = chain_plan(profile, 2, 4, 2);
  const Schedule schedule = make_schedule(ScheduleKind::gpipe, 2, 1, 2, stage_consumers(plan, profile), true);
  const SimulationResult r = simulate(plan, schedule, profile, cluster);
  EXPECT_TRUE(events_of(r, "allreduce").empty());
  ASSERT_EQ(events_of(r, "optimizer").size(), 2u);
  EXPECT_NEAR(events_of(r, "optimizer")[0].duration_us, 2 * 1000 * 1e-3 * 1e3, 1e-6);  // 2 nodes x 1000 bytes
  SimulationOptions quiet;
  quiet.record_trace = false;
  const SimulationResult q = simulate(plan, schedule, profile, cluster, quiet);
  EXPECT_TRUE(q.events.empty());
  EXPECT_TRUE(q.lanes.empty());
  EXPECT_DOUBLE_EQ(q.step_ms, r.step_ms);
}

}  // namespace
}  // namespace baton::parallel
