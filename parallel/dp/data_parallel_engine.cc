// The data-parallel engine's replicas and step: a step splits this process's rows of the global
// batch, runs each replica's forward and backward on its own thread with the bucketed all-reduce
// overlapping backward, then each replica's optimiser.
#include "parallel/dp/data_parallel_engine.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "parallel/comm/agreement.h"
#include "parallel/dp/replica.h"
#include "parallel/replicas/device_copy.h"
#include "parallel/replicas/micro_batch_seed.h"
#include "parallel/replicas/replica_set.h"
#include "parallel/replicas/replica_sync.h"
#include "parallel/replicas/trace_process.h"
#include "runtime/core/error.h"
#include "runtime/train/graph_contract.h"

namespace baton::parallel {

namespace {

// The replicas' parameter dtype: the policy's master dtype (unset: the model's own), once the model
// is checked to be trainable and built for the policy.
DType master_dtype(const Graph& graph, const std::optional<PrecisionPolicy>& precision) {
  check_trainable(graph, "DataParallelEngine");
  const PrecisionPolicy policy = precision ? *precision : precision_of(graph);
  check_precision(graph, policy, "DataParallelEngine");
  return policy.master();
}

// One line per parameter and buffer: "name dtype [shape]", compared across ranks at construction.
std::vector<std::string> model_fingerprint(const ParamStore& params) {
  std::vector<std::string> lines = parameter_fingerprint(params.params(), params.dtype());
  for (const BufferEntry& b : params.buffers()) {
    const Tensor t = params.buffer(b.name);
    lines.push_back(b.name + " " + std::string(dtype_name(t.dtype())) + " " + t.shape().str() + " (buffer)");
  }
  return lines;
}

// `rows` (on replica 0's device) on ctx's device, copied on ctx's stream; the batch's memory is
// marked as used by that stream, so that it is not reused before the copy has run.
Tensor rows_on_replica(const Tensor& rows, Context& ctx) {
  if (rows.device() == ctx.device()) return rows;
  Tensor copy = on_device_of(rows, ctx);
  rows.record_stream(ctx.stream());
  return copy;
}

}  // namespace

DataParallelEngine::DataParallelEngine(const Graph& graph, const TrainConfig& config, DataParallelOptions options)
    : graph_(graph),
      options_(std::move(options)),
      dtype_(master_dtype(graph, options_.precision)),
      plan_(plan_buckets(backward_ready_order(graph, graph.topological_order(), dtype_), dtype_, options_.buckets)) {
  const int n = static_cast<int>(options_.devices.size());
  BATON_CHECK(n >= 1, "data parallel: at least one device is needed");
  std::vector<std::unique_ptr<comm::Communicator>> comms = std::move(options_.communicators);
  if (comms.empty()) {
    comms = std::move(make_replica_communicators({options_.devices}, options_.comm_backend, [](size_t) {
                        return "data-parallel replicas";
                      }).front());
  }
  BATON_CHECK(static_cast<int>(comms.size()) == n, "data parallel: ", comms.size(), " communicators for ", n,
              " devices (one per replica)");
  world_ = comms.front()->size();
  BATON_CHECK(world_ % n == 0, "data parallel: ", world_, " replicas in all do not split into processes of ", n);
  const int first_rank = comms.front()->rank();
  for (int r = 0; r < n; ++r) {
    BATON_CHECK(comms[static_cast<size_t>(r)]->rank() == first_rank + r,
                "data parallel: this process's replicas must have consecutive ranks");
    replicas_.push_back(std::make_unique<Replica>(graph, config, options_.devices[static_cast<size_t>(r)], dtype_,
                                                  plan_, std::move(comms[static_cast<size_t>(r)])));
  }
  on_replicas(
      [&](Replica& r) { comm::check_agreement(*r.comm, "the model fingerprint", model_fingerprint(r.params)); });
  if (options_.averaging.active()) {
    check_model_averaging(options_.averaging, world_);
    on_replicas([&](Replica& r) {
      r.averaging = std::make_unique<ReplicaAveraging>(options_.averaging, r.params, r.ctx, *r.comm);
    });
  }
  batch_ready_ = std::make_unique<Event>(options_.devices.front(), /*timing=*/false);
  const int first = replicas_.front()->comm->rank();
  SumOverProcesses sum;
  if (world_ > n) {  // replicas in other processes: every local replica takes part in the all-reduce
    sum = [this](double value) {
      double total = 0;
      on_replicas([&](Replica& r) {
        const double reduced = r.all_reduce_values({value}, comm::ReduceOp::sum)[0];
        if (&r == replicas_.front().get()) total = reduced;
      });
      return total;
    };
  }
  set_processes({first / n, world_ / n}, first == 0, std::move(sum));
}

DataParallelEngine::~DataParallelEngine() = default;

Context& DataParallelEngine::input_context() { return replicas_.front()->ctx; }

size_t DataParallelEngine::local_index(const Replica& r) const {
  return static_cast<size_t>(r.comm->rank() - replicas_.front()->comm->rank());
}

const ParamStore& DataParallelEngine::params(int local_replica) const {
  return replicas_.at(static_cast<size_t>(local_replica))->params;
}

int64_t DataParallelEngine::averaging_meetings() const {
  const auto& a = replicas_.front()->averaging;
  return a ? a->meetings() : 0;
}

int64_t DataParallelEngine::averaging_bytes_sent(int local_replica) const {
  const auto& a = replicas_.at(static_cast<size_t>(local_replica))->averaging;
  return a ? a->exchange().bytes_sent() : 0;
}

const ReplicaStepRecord& DataParallelEngine::last_step(int local_replica) const {
  return replicas_.at(static_cast<size_t>(local_replica))->last;
}

std::vector<TraceEvent> DataParallelEngine::take_trace() { return std::exchange(trace_, {}); }

std::vector<TraceLane> DataParallelEngine::trace_lanes() const {
  return data_parallel_trace_lanes(replicas_.front()->comm->rank(), local_replicas(), kMeasuredProcess);
}

void DataParallelEngine::on_replicas(const std::function<void(Replica&)>& fn) {
  threads_.run(local_replicas(), [&](int r) { fn(*replicas_[static_cast<size_t>(r)]); });
}

PendingLoss DataParallelEngine::step(const data::Batch& batch, uint64_t seed, double lr) {
  // This process's rows of the global batch, split over its replicas.
  const int64_t rows = batch.rows(), n = local_replicas();
  BATON_CHECK(rows % n == 0, "data parallel: the global batch of ", rows * (world_ / n),
              " samples does not split evenly over ", world_, " replicas (use a batch size that is a multiple of ",
              world_, ")");
  // The loader wrote the batch on replica 0's stream; the others copy their rows after it, on theirs.
  batch_ready_->record(input_context().stream());
  const std::vector<data::Batch> parts = batch.split(n);
  on_replicas([&](Replica& r) {
    const int rank = r.comm->rank();
    const size_t local = local_index(r);
    r.ctx.stream().wait(*batch_ready_);
    const data::Batch mine = parts[local].map([&](const Tensor& t) { return rows_on_replica(t, r.ctx); });
    ReplicaStepRecord record;
    record.rank = rank;
    record.forward = ReplicaStepRecord::Clock::now();
    r.ctx.set_check_tag(rank);  // a deferred device check names the replica
    r.params.zero_grads(r.ctx);
    // Synchronous: the gradients' buckets all-reduced during backward. Model averaging: none (but in
    // post-local SGD's first steps).
    std::optional<ReplicaSync> sync;
    if (options_.averaging.synchronous_step(steps_)) {
      sync.emplace(r.executor, r.params, r.ctx, *r.comm, GradSyncStrategy::bucket, options_.sync, &r.buckets,
                   "data-parallel replica " + std::to_string(rank));
    }
    Tape tape;
    const std::vector<Tensor> out = r.executor.forward(r.ctx, batch_inputs(graph_, r.executor, mine), tape, Mode::train,
                                                       micro_batch_seed(seed, rank));
    record.backward = ReplicaStepRecord::Clock::now();
    r.executor.backward(r.ctx, tape, std::vector<Tensor>(out.size()));
    record.backward_end = ReplicaStepRecord::Clock::now();
    if (sync) sync->finish();
    r.optimizer->step(r.ctx, lr);
    if (options_.averaging.averages_after(steps_)) r.averaging->meet();
    // Equal shares of the batch: the loss is the mean of the replicas' mean losses, reduced on the
    // device and read without waiting (on a GPU; a CPU stream has run everything by now).
    const Tensor loss = out[executor_output_index(r.executor, loss_output(graph_))];
    r.comm->all_reduce(loss, comm::ReduceOp::mean, r.ctx.stream())->wait_on(r.ctx.stream());
    r.loss = r.readback.read(r.ctx, {loss}, {1.0},
                             [](int64_t tag) { return "in data-parallel replica " + std::to_string(tag); });
    record.end = ReplicaStepRecord::Clock::now();
    if (sync) {
      record.backward_end = sync->buckets()->backward_end();
      record.buckets = sync->buckets()->timings();
      record.ready_order = sync->buckets()->ready_order();
    }
    for (size_t b = 0; b < r.buckets.size(); ++b) record.bucket_bytes.push_back(r.buckets.bytes(b));
    r.last = std::move(record);
  });
  ++steps_;
  if (traced_steps_ < trace_steps_) {
    ++traced_steps_;
    for (const auto& r : replicas_) append_trace_events(r->last, trace_origin_, kMeasuredProcess, trace_);
  }
  // Replica 0's loss, and every other replica's deferred device checks (a bad label in its rows).
  PendingLoss loss = std::move(replicas_.front()->loss);
  std::vector<PendingLoss> others;
  for (size_t r = 1; r < replicas_.size(); ++r) others.push_back(std::move(replicas_[r]->loss));
  loss.also_resolve(std::move(others));
  return loss;
}

}  // namespace baton::parallel
