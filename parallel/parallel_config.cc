// ParallelConfig JSON reading and checks (see parallel_config.h).
#include "parallel/parallel_config.h"

#include <algorithm>

#include "parallel/plan/cluster.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_config.h"

namespace baton::parallel {
namespace {

// The choice `field` of `c` (absent: `current`) read by `parse`; a name it does not know is an
// error naming the source and the field, with parse's list of the accepted names.
template <class Kind>
Kind read_choice(const JsonConfig& c, std::string_view field, Kind current, Kind (*parse)(std::string_view)) {
  if (!c.has(field)) return current;
  const std::string name = c.get_string(field, "");
  try {
    return parse(name);
  } catch (const Error& e) {
    BATON_FAIL(c.source(), ": field '", field, "': ", e.message());
  }
}

}  // namespace

void ParallelConfig::update_from_json(const nlohmann::json& j, std::string_view where) {
  const std::string what(where);
  BATON_CHECK(j.is_object(), what, ": expected an object such as {\"stages\": 2}, got ", j.dump());
  JsonConfig c(j, what,
               {"stages",
                "data_parallel",
                "groups",
                "grad_sync",
                "model_averaging",
                "average_every",
                "unused_parameters",
                "micro_batches",
                "schedule",
                "partitioner",
                "devices",
                "recompute",
                "deferred_bn",
                "trace",
                "block_momentum",
                "block_lr",
                "block_nesterov",
                "elastic_beta",
                "local_after",
                "averaging_exchange",
                "averaging_cluster",
                "replication",
                "plan_file",
                "comm_backend"});
  stages = c.get_int32("stages", stages, INT32_MIN);
  groups = c.get_int32("groups", groups, INT32_MIN);
  grad_sync = read_choice(c, "grad_sync", grad_sync, parse_grad_sync);
  model_averaging = read_choice(c, "model_averaging", model_averaging, parse_averaging);
  average_every = c.get_int32("average_every", average_every, INT32_MIN);
  if (c.has("block_momentum")) {
    block_momentum.reset();
    if (!j["block_momentum"].is_null()) block_momentum = c.get_double("block_momentum");
  }
  block_lr = c.get_double("block_lr", block_lr);
  block_nesterov = c.get_bool("block_nesterov", block_nesterov);
  elastic_beta = c.get_double("elastic_beta", elastic_beta);
  local_after = c.get_int32("local_after", local_after, INT32_MIN);
  averaging_exchange = read_choice(c, "averaging_exchange", averaging_exchange, parse_exchange);
  averaging_cluster = c.get_string("averaging_cluster", averaging_cluster);
  data_parallel = c.get_int32("data_parallel", data_parallel, INT32_MIN);
  unused_parameters = read_choice(c, "unused_parameters", unused_parameters, parse_unused_parameters);
  micro_batches = c.get_int32("micro_batches", micro_batches, INT32_MIN);
  schedule = read_choice(c, "schedule", schedule, parse_schedule_kind);
  partitioner = read_choice(c, "partitioner", partitioner, parse_partitioner);
  replication = read_choice(c, "replication", replication, parse_replication);
  if (c.has("devices") && j["devices"].is_array()) {
    devices.clear();
    for (const nlohmann::json& d : j["devices"]) {
      BATON_CHECK(d.is_string(), what, ": field 'devices' holds ", d.dump(),
                  ", expected device names such as \"cpu:0\"");
      if (!devices.empty()) devices += ',';
      devices += d.get<std::string>();
    }
  } else {
    devices = c.get_string("devices", devices);
  }
  recompute = c.get_bool("recompute", recompute);
  deferred_bn = c.get_bool("deferred_bn", deferred_bn);
  trace = c.get_string("trace", trace);
  plan_file = c.get_string("plan_file", plan_file);
  if (c.has("comm_backend")) {
    comm_backend = comm::parse_comm_backend(c.get_string("comm_backend", ""), what + ": field 'comm_backend'");
  }
}

nlohmann::json ParallelConfig::to_json() const {
  return {{"stages", stages},
          {"data_parallel", data_parallel},
          {"groups", groups},
          {"grad_sync", grad_sync_name(grad_sync)},
          {"model_averaging", averaging_name(model_averaging)},
          {"average_every", average_every},
          {"block_momentum", block_momentum ? nlohmann::json(*block_momentum) : nlohmann::json(nullptr)},
          {"block_lr", block_lr},
          {"block_nesterov", block_nesterov},
          {"elastic_beta", elastic_beta},
          {"local_after", local_after},
          {"averaging_exchange", exchange_name(averaging_exchange)},
          {"averaging_cluster", averaging_cluster},
          {"unused_parameters", unused_parameters_name(unused_parameters)},
          {"micro_batches", micro_batches},
          {"schedule", schedule_kind_name(schedule)},
          {"partitioner", partitioner_name(partitioner)},
          {"replication", replication_name(replication)},
          {"devices", devices},
          {"recompute", recompute},
          {"deferred_bn", deferred_bn},
          {"trace", trace},
          {"plan_file", plan_file},
          {"comm_backend", std::string(comm::comm_backend_name(comm_backend))}};
}

ParallelConfig take_parallel_config(nlohmann::json& file, std::string_view where, ParallelConfig defaults) {
  if (!file.is_object() || !file.contains("parallel")) return defaults;
  defaults.update_from_json(file["parallel"], std::string(where) + " (field 'parallel')");
  file.erase("parallel");
  return defaults;
}

std::string layout_description(const ParallelConfig& p) {
  if (!p.plan_file.empty()) return "the plan in " + p.plan_file;
  if (p.data_parallel > 0) {
    const std::string averaging = p.model_averaging == Averaging::none
                                      ? ""
                                      : " (model averaging " + std::string(averaging_name(p.model_averaging)) + ")";
    return "data parallelism over " + std::to_string(p.data_parallel) + " replicas" + averaging;
  }
  if (p.stages >= 1 && p.groups > 1) {
    return "the hybrid of " + std::to_string(p.groups) + " groups x " + std::to_string(p.stages) + " stages";
  }
  if (p.stages >= 1) return "a pipeline of " + std::to_string(p.stages) + " stages";
  return "one device";
}

int micro_batch_count(const ParallelConfig& parallel, int64_t batch) {
  if (parallel.micro_batches > 0) return parallel.micro_batches;
  if (parallel.groups > 1) batch /= parallel.groups;
  for (int64_t m = std::min(4 * int64_t{parallel.stages}, batch); m > 1; --m) {  // no overflow for any --stages
    if (batch % m == 0) return static_cast<int>(m);
  }
  return 1;
}

void check_parallel_config(const ParallelConfig& p, const TrainConfig& config) {
  BATON_CHECK(p.stages >= 1, "--stages must be at least 1 (got ", p.stages, "); the pipeline flags need --stages S");
  BATON_CHECK(p.micro_batches >= 0, "--micro-batches must be at least 1 (got ", p.micro_batches, ")");
  BATON_CHECK(p.groups >= 1, "--groups must be at least 1 (got ", p.groups, ")");
  BATON_CHECK(p.data_parallel == 0 || p.groups == 1, "--data-parallel ", p.data_parallel, " with --groups ", p.groups,
              ": --data-parallel N replicates the whole model on N devices, --groups G with --stages S runs G "
              "pipelines of S stages (the hybrid); give one of them");
  BATON_CHECK(config.batch_size % p.groups == 0, "--batch-size ", config.batch_size,
              " is the global batch and must split evenly over the ", p.groups, " groups of --groups (a multiple of ",
              p.groups, ")");
  const int64_t share = config.batch_size / p.groups;
  const int m = micro_batch_count(p, config.batch_size);
  BATON_CHECK(share % m == 0, "--micro-batches ", m, " does not divide ",
              p.groups > 1 ? "each group's share of the batch, " : "the batch size ", share);
  BATON_CHECK(p.replication == Replication::equal || p.partitioner == PartitionerKind::antichain,
              "--replication free: each stage's replicas are chosen by the antichain partitioner (add --partitioner "
              "antichain; the partitioner is '",
              partitioner_name(p.partitioner), "')");
  BATON_CHECK(p.replication == Replication::equal || p.schedule != ScheduleKind::interleaved,
              "--replication free runs one stage per position: use --schedule gpipe or 1f1b, not interleaved");
}

void check_data_parallel_config(const ParallelConfig& p, const TrainConfig& config) {
  BATON_CHECK(p.data_parallel >= 1, "--data-parallel must be at least 1 (got ", p.data_parallel, ")");
  BATON_CHECK(p.stages == 0 && p.micro_batches == 0 && !p.recompute && !p.deferred_bn && p.groups == 1,
              "--data-parallel with pipeline settings (--stages, --micro-batches, --recompute, --deferred-bn, "
              "--groups): the hybrid of pipeline and data parallelism is --groups G --stages S (docs/hybrid.md)");
  BATON_CHECK(config.batch_size % p.data_parallel == 0, "--batch-size ", config.batch_size,
              " is the global batch and must split evenly over the ", p.data_parallel,
              " replicas of --data-parallel (a multiple of ", p.data_parallel, ")");
}

}  // namespace baton::parallel

namespace baton::parallel {

ModelAveraging model_averaging_of(const ParallelConfig& p, int replicas) {
  ModelAveraging a;
  a.kind = p.model_averaging;
  a.every = p.average_every;
  a.block_momentum = p.block_momentum;
  a.block_lr = p.block_lr;
  a.block_nesterov = p.block_nesterov;
  a.elastic_beta = p.elastic_beta;
  a.local_after = p.local_after;
  a.exchange = p.averaging_exchange;
  const ParallelConfig defaults;
  const auto only_for = [&](bool given, Averaging kind, std::string_view flag) {
    BATON_CHECK(!given || a.kind == kind, flag, " is for --model-averaging ", averaging_name(kind), " (got ",
                averaging_name(a.kind), ")");
  };
  BATON_CHECK(a.kind != Averaging::none ||
                  (p.average_every == defaults.average_every && p.averaging_exchange == defaults.averaging_exchange),
              "--average-every and --averaging-exchange are for --model-averaging periodic, bmuf, easgd or "
              "post-local (got none)");
  only_for(p.block_momentum.has_value(), Averaging::bmuf, "--block-momentum");
  only_for(p.block_lr != defaults.block_lr, Averaging::bmuf, "--block-lr");
  only_for(p.block_nesterov != defaults.block_nesterov, Averaging::bmuf, "--block-nesterov");
  only_for(p.elastic_beta != defaults.elastic_beta, Averaging::easgd, "--elastic-beta");
  only_for(p.local_after != defaults.local_after, Averaging::post_local, "--local-after");
  BATON_CHECK(p.averaging_cluster.empty() || a.exchange == ExchangeKind::tree,
              "--averaging-cluster shapes the tree exchange: give it with --averaging-exchange tree");
  if (!p.averaging_cluster.empty()) {
    const Cluster cluster = load_cluster(p.averaging_cluster);
    BATON_CHECK(cluster.num_devices() >= replicas, "--averaging-cluster ", p.averaging_cluster, " has ",
                cluster.num_devices(), " devices for ", replicas, " replicas (replica r sits on its device r)");
    for (int r = 0; r < replicas; ++r) a.nodes.push_back(cluster.node_of(r));
  }
  check_model_averaging(a, replicas);
  return a;
}

}  // namespace baton::parallel
