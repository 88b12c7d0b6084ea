// The data-parallel engine's model state across replicas: initial values and weights broadcast from
// rank 0, sharded evaluation, and checkpoints in the single-device format.
#include <algorithm>
#include <cmath>

#include "parallel/dp/data_parallel_engine.h"
#include "parallel/dp/replica.h"
#include "runtime/data/dataset_shard.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/evaluation.h"

namespace baton::parallel {

void DataParallelEngine::broadcast_from_rank0(bool buffers) {
  on_replicas([&](Replica& r) {
    std::vector<comm::WorkHandle> works{r.comm->broadcast(r.params.params_flat(), 0, r.ctx.stream())};
    if (buffers) {
      for (const BufferEntry& b : r.params.buffers()) {
        works.push_back(r.comm->broadcast(r.params.buffer(b.name), 0, r.ctx.stream()));
      }
    }
    for (const comm::WorkHandle& w : works) w->wait_on(r.ctx.stream());
  });
}

void DataParallelEngine::agree_on_model() {
  if (options_.averaging.active()) on_replicas([&](Replica& r) { r.averaging->enter_agreement(steps_); });
  broadcast_from_rank0(/*buffers=*/true);  // the agreed parameters again, and rank 0's buffers
}

void DataParallelEngine::leave_agreement() {
  if (options_.averaging.active()) on_replicas([&](Replica& r) { r.averaging->leave_agreement(); });
}

void DataParallelEngine::restart_averaging() {
  if (options_.averaging.active()) on_replicas([&](Replica& r) { r.averaging->restart(); });
}

void DataParallelEngine::initialize(uint64_t seed) {
  replicas_.front()->params.initialize(replicas_.front()->ctx, seed);
  broadcast_from_rank0(/*buffers=*/true);
  restart_averaging();
}

EvalResult DataParallelEngine::evaluate(const data::Dataset& test, int64_t batch_size, int workers) {
  agree_on_model();
  const bool classification = has_labels(graph_);
  // Each replica evaluates its shard of the test set; the sums over the shards make the result. The
  // sums are reduced only once every replica is done: a replica's loader frees pinned memory when
  // it ends, which waits for all the GPUs, so it must not overlap a peer's pending collective.
  std::vector<EvalResult> shards(replicas_.size());
  on_replicas([&](Replica& r) {
    const data::DatasetShard shard(test, r.comm->rank(), world_);
    if (shard.size() == 0) return;
    shards[local_index(r)] =
        evaluate_batches(r.ctx, shard, batch_size, std::max(1, workers / local_replicas()), classification,
                         EvalStop::on_request, [&](const data::Batch& batch) {
                           Tape tape;
                           const std::vector<Tensor> out =
                               r.executor.forward(r.ctx, batch_inputs(graph_, r.executor, batch), tape, Mode::eval);
                           EvalPiece piece;
                           piece.ctx = &r.ctx;
                           piece.loss = out[executor_output_index(r.executor, loss_output(graph_))];
                           piece.samples = batch.rows();
                           if (classification) {
                             piece.logits = out[executor_output_index(r.executor, prediction_output(graph_))];
                             piece.labels = batch.targets;
                           }
                           return std::vector<EvalPiece>{piece};
                         });
  });
  leave_agreement();
  EvalResult result;
  on_replicas([&](Replica& r) {
    const EvalResult& mine = shards[local_index(r)];
    const auto n = static_cast<double>(mine.samples);
    const auto scored = static_cast<double>(mine.scored);  // top-1 and top-5 count over these targets
    const std::vector<double> s =
        r.all_reduce_values({mine.loss * n, std::round(mine.top1 * scored), std::round(mine.top5 * scored), n, scored},
                            comm::ReduceOp::sum);
    if (&r != replicas_.front().get()) return;
    result.samples = static_cast<int64_t>(s[3]);
    result.loss = s[3] > 0 ? s[0] / s[3] : 0;
    if (classification && s[4] > 0) {
      result.scored = static_cast<int64_t>(s[4]);
      result.top1 = s[1] / s[4];
      result.top5 = s[2] / s[4];
    }
  });
  return result;
}

std::string DataParallelEngine::save_checkpoint(CheckpointManager& manager, const CheckpointState& state) {
  agree_on_model();
  std::string saved;
  // Model averaging's per-replica state (gathered by every process: rank 0's writes it).
  const std::vector<CheckpointExtraFile> extras = averaging_checkpoint_files();
  if (primary()) {  // rank 0's process writes
    Replica& r0 = *replicas_.front();
    saved = manager.save(r0.params, *r0.optimizer, state, r0.ctx, extras);
  }
  leave_agreement();
  return saved;
}

CheckpointState DataParallelEngine::load_checkpoint(const std::string& dir) {
  const std::optional<SafetensorsFile> averaging = open_averaging_state(dir);  // checked before anything loads
  std::vector<CheckpointState> states(replicas_.size());
  on_replicas(
      [&](Replica& r) { states[local_index(r)] = CheckpointManager::load(dir, r.params, r.optimizer.get(), r.ctx); });
  read_averaging_state(averaging);
  steps_ = states.front().step;  // the averaging's period goes on where the run was
  return states.front();
}

void DataParallelEngine::load_weights(const std::string& safetensors_path) {
  // Every process reads the file (checked in full, as on one device); rank 0's values then win.
  Replica& r0 = *replicas_.front();
  baton::load_weights(safetensors_path, r0.params, r0.ctx);
  broadcast_from_rank0(/*buffers=*/true);
  restart_averaging();
}

}  // namespace baton::parallel
