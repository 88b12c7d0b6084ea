// simulate(): checks a schedule against its plan, derives each stage's costs (compute, transfers,
// all-reduce buckets, optimiser step), runs the event engine and summarises the step and its trace.
#include "parallel/plan/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "parallel/plan/cost_model.h"
#include "parallel/plan/simulator_engine.h"
#include "runtime/core/error.h"

namespace baton::parallel {

namespace {

using detail::concat;

void check_fit(const Plan& plan, const Schedule& schedule, const Profile& profile, const Cluster& cluster) {
  validate_plan(plan, profile);
  BATON_CHECK(schedule.stages == plan.num_stages(), "simulate: the schedule has ", schedule.stages,
              " stages but the plan has ", plan.num_stages());
  BATON_CHECK(schedule.micro_batches == plan.micro_batches, "simulate: the schedule has ", schedule.micro_batches,
              " micro-batches but the plan has ", plan.micro_batches);
  for (int s = 0; s < plan.num_stages(); ++s) {
    BATON_CHECK(schedule.replicas_of(s) == plan.stages[s].replicas, "simulate: the schedule gives stage ", s, " ",
                schedule.replicas_of(s), " replica(s) but the plan has ", plan.stages[s].replicas,
                " (make the schedule with the plan's replicas)");
  }
  BATON_CHECK(schedule.devices >= 1 && schedule.chunks() == plan.chunks_per_device &&
                  schedule.devices * plan.chunks_per_device == plan.num_stages(),
              "simulate: the schedule puts ", schedule.stages, " stages on ", schedule.devices,
              " pipeline positions but the plan has ", plan.chunks_per_device, " chunk(s) per device");
  for (int s = 0; s < plan.num_stages(); ++s) {
    for (const int d : plan.stages[s].devices) {
      BATON_CHECK(d >= 0 && d < cluster.num_devices(), "simulate: stage ", s, " runs on device ", d, " but cluster '",
                  cluster.name(), "' has devices 0..", cluster.num_devices() - 1);
    }
  }
  try {
    validate_schedule(schedule, stage_consumers(plan, profile));
  } catch (Error& e) {
    e.add_context("in simulate: the schedule is not valid for this plan");
    throw;
  }
  // Replicated stages need their gradients reduced: the schedule must say when.
  std::vector<char> has_all_reduce(plan.num_stages(), 0);
  for (const auto& program : schedule.programs) {
    for (const Instruction& in : program) {
      if (in.op == Op::all_reduce) has_all_reduce[in.stage] = 1;
    }
  }
  for (int s = 0; s < plan.num_stages(); ++s) {
    BATON_CHECK(plan.stages[s].replicas == 1 || has_all_reduce[s], "simulate: stage ", s, " has ",
                plan.stages[s].replicas,
                " replicas but the schedule has no all_reduce for it (make the schedule with all_reduce = true)");
  }
}

// Gradient buckets of a stage, DDP-style: nodes in reverse topological order fill a bucket until it
// holds at least `bucket_bytes`; a bucket is ready when the last of its nodes has finished backward.
std::vector<sim::Bucket> make_buckets(const Profile& profile, const Stage& stage, double batch, double bwd_ms,
                                      int64_t bucket_bytes) {
  std::vector<double> piece(stage.nodes.size());
  double sum = 0;
  for (size_t i = 0; i < stage.nodes.size(); ++i) {
    piece[i] = profile.bwd_ms(stage.nodes[stage.nodes.size() - 1 - i], batch);
    sum += piece[i];
  }
  const double scale = sum > 0 ? bwd_ms / sum : 0.0;  // pieces add up to the stage's backward
  std::vector<sim::Bucket> buckets;
  sim::Bucket open;
  double done = 0;
  for (size_t i = 0; i < stage.nodes.size(); ++i) {
    const int node = stage.nodes[stage.nodes.size() - 1 - i];
    done += piece[i] * scale;
    const int64_t bytes = profile.nodes[node].param_bytes;
    if (bytes == 0) continue;
    if (open.first_node < 0) open.first_node = node;
    open.last_node = node;
    open.bytes += bytes;
    open.ready_ms = std::min(done, bwd_ms);
    if (open.bytes >= bucket_bytes) {
      buckets.push_back(open);
      open = {};
    }
  }
  if (open.bytes > 0) buckets.push_back(open);
  return buckets;
}

std::string lane_name(const sim::Lane& lane, const Plan& plan, const Schedule& schedule) {
  if (lane.kind == sim::LaneKind::link) return concat("link ", lane.from, "->", lane.to);
  const int device = plan.stages[lane.position].devices[static_cast<size_t>(lane.replica)];
  int sharing = 0;  // pipeline positions and replicas on this device
  for (int p = 0; p < schedule.devices; ++p) {
    for (const int d : plan.stages[p].devices) sharing += d == device ? 1 : 0;
  }
  const std::string suffix = sharing > 1 ? concat(" (position ", lane.position, ")") : std::string();
  if (lane.kind == sim::LaneKind::compute) return concat("device ", device, " compute", suffix);
  return concat(schedule.chunks() > 1 ? "position " : "stage ", lane.position, " all-reduce");
}

TraceEvent to_event(const sim::Interval& i, const Schedule& schedule) {
  TraceEvent e;
  e.process = 0;
  e.thread = i.lane;
  e.start_us = i.start_ms * 1000.0;
  e.duration_us = (i.end_ms - i.start_ms) * 1000.0;
  e.args = {{"stage", i.stage}};
  const std::string chunk = schedule.chunks() > 1 ? concat(" s", i.stage) : std::string();
  switch (i.activity) {
    case sim::Activity::forward:
      e.name = concat("F", i.micro_batch, chunk);
      e.category = "forward";
      e.args["micro_batch"] = i.micro_batch;
      break;
    case sim::Activity::backward:
      e.name = concat("B", i.micro_batch, chunk);
      e.category = "backward";
      e.args["micro_batch"] = i.micro_batch;
      break;
    case sim::Activity::send_activation:
    case sim::Activity::send_gradient:
      e.name = concat(i.activity == sim::Activity::send_activation ? "send act " : "send grad ", i.micro_batch, " -> s",
                      i.peer);
      e.category = "transfer";
      e.args["micro_batch"] = i.micro_batch;
      e.args["to_stage"] = i.peer;
      e.args["bytes"] = i.bytes;
      break;
    case sim::Activity::allreduce:
      e.name = i.bucket >= 0 ? concat("all-reduce s", i.stage, " bucket ", i.bucket) : concat("all-reduce s", i.stage);
      e.category = "allreduce";
      e.args["bytes"] = i.bytes;
      if (i.bucket >= 0) e.args["bucket"] = i.bucket;
      break;
    case sim::Activity::optimizer:
      e.name = concat("optimizer s", i.stage);
      e.category = "optimizer";
      break;
  }
  return e;
}

}  // namespace

SimulationResult simulate(const Plan& plan, const Schedule& schedule, const Profile& profile, const Cluster& cluster,
                          const SimulationOptions& options) {
  check_fit(plan, schedule, profile, cluster);
  BATON_CHECK(options.bucket_bytes >= 0, "simulate: bucket_bytes must be >= 0, got ", options.bucket_bytes);
  const int num_stages = plan.num_stages();
  const bool free_comm = options.free_communication;

  std::vector<sim::StageCosts> costs(num_stages);
  const double micro_batch = plan.micro_batch_size();  // each replica computes whole micro-batches
  for (int s = 0; s < num_stages; ++s) {
    const Stage& stage = plan.stages[s];
    sim::StageCosts& c = costs[s];
    const StageWork work = stage_work(profile, cluster, stage.nodes, micro_batch, stage.devices, options.algorithm);
    c.fwd_ms = work.fwd_ms;
    c.bwd_ms = work.bwd_ms;
    c.param_bytes = work.param_bytes;
    c.optimizer_ms = work.optimizer_ms;
    c.devices = stage.devices;
    if (cluster.concurrent_compute() > 0) {  // devices sharing their node's cores: one pool per node
      for (const int d : stage.devices) c.pools.push_back(cluster.node_of(d));
    }
    c.all_reduce = stage.replicas > 1 && c.param_bytes > 0;
    if (!c.all_reduce) continue;
    c.allreduce_ms = free_comm ? 0.0 : work.allreduce_ms;
    if (options.bucket_bytes > 0) {
      c.buckets = make_buckets(profile, stage, micro_batch, c.bwd_ms, options.bucket_bytes);
      for (sim::Bucket& b : c.buckets) {
        b.allreduce_ms = free_comm ? 0.0 : cluster.allreduce_ms(b.bytes, stage.devices, options.algorithm);
      }
    }
  }

  // Bytes per sample of the values stage a produces and stage b reads; each transfer carries a whole
  // micro-batch (transfer_bytes): activations a -> b, gradients b -> a.
  std::vector<int> stage_of(profile.num_nodes(), -1);
  for (int s = 0; s < num_stages; ++s) {
    for (const int n : plan.stages[s].nodes) stage_of[n] = s;
  }
  std::vector<std::vector<int64_t>> per_sample(num_stages, std::vector<int64_t>(num_stages, 0));
  for (const ProfiledValue& v : profile.values) {
    if (v.producer < 0) continue;
    const int a = stage_of[v.producer];
    std::set<int> readers;
    for (const int c : v.consumers) {
      if (stage_of[c] != a) readers.insert(stage_of[c]);
    }
    for (const int b : readers) per_sample[a][b] += v.bytes_per_sample;
  }
  std::vector<std::vector<int64_t>> bytes(num_stages, std::vector<int64_t>(num_stages, 0));
  for (int a = 0; a < num_stages; ++a) {
    for (int b = a + 1; b < num_stages; ++b) bytes[a][b] = bytes[b][a] = transfer_bytes(per_sample[a][b], micro_batch);
  }
  const sim::TransferTime transfer_ms = [&](int64_t n, int from, int to) {
    return free_comm ? 0.0 : cluster.p2p_ms(n, from, to);
  };

  std::vector<int> pool_places;
  if (cluster.concurrent_compute() > 0) {
    for (int d = 0; d < cluster.num_devices(); ++d) {
      pool_places.resize(std::max(pool_places.size(), static_cast<size_t>(cluster.node_of(d)) + 1),
                         cluster.concurrent_compute());
    }
  }
  const sim::Timeline timeline = sim::run_programs(schedule, costs, bytes, transfer_ms, pool_places);

  SimulationResult result;
  double first_forward = std::numeric_limits<double>::infinity();
  double last_backward = 0;
  std::vector<double> lane_fb(static_cast<size_t>(timeline.compute_lanes), 0.0);
  std::vector<double> stage_busy(num_stages, 0.0);
  for (const sim::Interval& i : timeline.intervals) {
    const double ms = i.end_ms - i.start_ms;
    result.step_ms = std::max(result.step_ms, i.end_ms);
    switch (i.activity) {
      case sim::Activity::forward:
      case sim::Activity::backward:
        first_forward = std::min(first_forward, i.start_ms);
        last_backward = std::max(last_backward, i.end_ms);
        lane_fb[static_cast<size_t>(i.lane)] += ms;
        stage_busy[i.stage] += ms;
        break;
      case sim::Activity::optimizer:
        stage_busy[i.stage] += ms;
        break;
      case sim::Activity::send_activation:
      case sim::Activity::send_gradient:
        result.communication_ms += ms;
        break;
      case sim::Activity::allreduce:
        result.communication_ms += ms * plan.stages[i.stage].replicas;  // every replica takes part
        break;
    }
  }
  result.throughput = result.step_ms > 0 ? plan.batch / result.step_ms * 1000.0 : 0.0;
  const double window = last_backward - first_forward;
  if (window > 0) {
    double busy = 0;
    for (const double b : lane_fb) busy += b;
    result.bubble_fraction = std::clamp(1.0 - busy / (static_cast<double>(lane_fb.size()) * window), 0.0, 1.0);
  }
  result.peak_in_flight = timeline.peak_in_flight;
  for (int s = 0; s < num_stages; ++s) {
    const double replicas = plan.stages[s].replicas;
    result.stage_utilisation.push_back(result.step_ms > 0 ? stage_busy[s] / (replicas * result.step_ms) : 0.0);
    result.compute_ms += stage_busy[s];
    result.peak_memory_bytes.push_back(
        stage_memory(profile, plan.stages[s].nodes, micro_batch, timeline.peak_in_flight[s]).total());
  }

  if (options.record_trace) {
    // Lanes in display order: each position's replicas' compute then its all-reduce lane, then the links.
    std::vector<int> order(timeline.lanes.size());
    for (size_t l = 0; l < order.size(); ++l) order[l] = static_cast<int>(l);
    const auto key = [&](int l) {
      const sim::Lane& lane = timeline.lanes[l];
      const bool link = lane.kind == sim::LaneKind::link;
      return std::tuple(link, link ? lane.from : lane.position, link ? lane.to : static_cast<int>(lane.kind),
                        lane.replica);
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
    std::vector<int> lane_thread(timeline.lanes.size(), -1);
    for (const int l : order) {
      lane_thread[l] = static_cast<int>(result.lanes.size());
      result.lanes.push_back({0, lane_thread[l], lane_name(timeline.lanes[l], plan, schedule)});
    }
    result.events.reserve(timeline.intervals.size());
    for (const sim::Interval& i : timeline.intervals) {
      TraceEvent e = to_event(i, schedule);
      e.thread = lane_thread[i.lane];
      result.events.push_back(std::move(e));
    }
  }
  return result;
}

}  // namespace baton::parallel
