// The data-parallel engine's model-averaging state in checkpoints: rank 0 gathers every replica's
// own parameters and optimiser state beside the shared averaging state; a resumed run puts each
// replica's back (docs/data-parallel.md, "Model averaging").
#include <optional>

#include "parallel/dp/data_parallel_engine.h"
#include "parallel/dp/replica.h"
#include "parallel/replicas/averaging_checkpoint.h"
#include "runtime/core/error.h"

namespace baton::parallel {
std::vector<CheckpointExtraFile> DataParallelEngine::averaging_checkpoint_files() {
  if (!options_.averaging.active()) return {};
  // Every replica's parts packed into one row; rank 0 receives the others' rows.
  const Replica& first = *replicas_.front();
  const int64_t part = first.params.params_flat().numel();
  const int64_t parts = static_cast<int64_t>(replica_own_state(first.params.params_flat(), *first.optimizer).size());
  const Tensor rows =
      primary() ? Tensor::empty(Shape{world_ * parts * part}, first.params.dtype(), replicas_.front()->ctx) : Tensor();
  on_replicas([&](Replica& r) {
    const NamedTensors mine = replica_own_state(r.averaging->continuing_parameters(), *r.optimizer);
    const int rank = r.comm->rank();
    Tensor row =
        rank == 0 ? rows.slice(0, parts * part) : Tensor::empty(Shape{parts * part}, mine[0].second.dtype(), r.ctx);
    for (size_t i = 0; i < mine.size(); ++i) {
      const auto at = static_cast<int64_t>(i) * part;
      row.slice(at, at + part).copy_from(mine[i].second, r.ctx.stream());
    }
    if (rank == 0) {
      for (int peer = 1; peer < world_; ++peer) {
        r.comm->recv(rows.slice(peer * parts * part, (peer + 1) * parts * part), peer, r.ctx.stream())
            ->wait_on(r.ctx.stream());
      }
    } else {
      r.comm->send(row, 0, r.ctx.stream())->wait_on(r.ctx.stream());
    }
    r.ctx.synchronize();
  });
  if (!primary()) return {};
  CheckpointExtraFile file{std::string(kAveragingFileName), {}, averaging_file_metadata(options_.averaging, world_)};
  const NamedTensors names = replica_own_state(first.params.params_flat(), *first.optimizer);
  for (int replica = 0; replica < world_; ++replica) {
    for (size_t i = 0; i < names.size(); ++i) {
      const int64_t at = (replica * parts + static_cast<int64_t>(i)) * part;
      file.tensors.emplace_back(replica_tensor_name(replica, names[i].first), rows.slice(at, at + part));
    }
  }
  for (auto& shared : first.averaging->shared_state()) file.tensors.push_back(std::move(shared));
  return {std::move(file)};
}

std::optional<SafetensorsFile> DataParallelEngine::open_averaging_state(const std::string& dir) {
  std::optional<SafetensorsFile> file = open_averaging_file(dir, options_.averaging);
  if (!file) return std::nullopt;
  check_averaging_file(*file, options_.averaging, world_);
  for (const auto& r : replicas_) {
    NamedTensors expected = r->averaging->shared_state();
    for (const auto& [name, tensor] : replica_own_state(r->params.params_flat(), *r->optimizer)) {
      expected.emplace_back(replica_tensor_name(r->comm->rank(), name), tensor);
    }
    check_averaging_tensors(*file, expected);
  }
  return file;
}

void DataParallelEngine::read_averaging_state(const std::optional<SafetensorsFile>& file) {
  if (!options_.averaging.active()) return;
  if (!file) {
    restart_averaging();
    return;
  }
  on_replicas([&](Replica& r) {
    for (const auto& [name, tensor] : replica_own_state(r.params.params_flat(), *r.optimizer)) {
      file->read_into(replica_tensor_name(r.comm->rank(), name), tensor, r.ctx.stream());
    }
    r.averaging->load_shared_state(*file);
  });
}

}  // namespace baton::parallel
