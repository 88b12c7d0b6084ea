// HybridExecutor's model averaging: every stage's replicas across the groups step on their own
// gradients and meet every H steps (ReplicaAveraging over the stage's communicator); evaluations
// and checkpoints see the agreed model, and checkpoints hold every replica's state (docs/hybrid.md).
#include <string>
#include <utility>

#include "parallel/pipeline/hybrid_executor.h"
#include "parallel/replicas/averaging_checkpoint.h"
#include "parallel/replicas/device_copy.h"
#include "parallel/replicas/micro_batch_seed.h"
#include "runtime/core/error.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

void HybridExecutor::on_local_groups(const std::function<void(int, PipelineExecutor&)>& fn) {
  if (local_group_ >= 0) return fn(0, *groups_.front());
  on_groups([&](int g) { fn(g, *groups_[static_cast<size_t>(g)]); });
}

void HybridExecutor::start_averaging(const ModelAveraging& averaging) {
  averaging_ = averaging;
  if (!averaging_.active()) return;
  BATON_CHECK(groups_count_ >= 2, "model averaging (", averaging_name(averaging_.kind),
              ") averages each stage's replicas across the groups: it needs --groups G with G >= 2, not ",
              groups_count_);
  check_model_averaging(averaging_, groups_count_);
  stage_averaging_.resize(groups_.size());
  // Collective per stage (the tree exchange splits its communicator): every group in stage order.
  on_local_groups([&](int i, PipelineExecutor& pipe) {
    for (int s = 0; s < pipe.num_stages(); ++s) {
      if (!pipe.local(s)) {
        stage_averaging_[static_cast<size_t>(i)].push_back(nullptr);
        continue;
      }
      BATON_CHECK(pipe.stage_optimizer(s) != nullptr,
                  "model averaging in the hybrid needs the stages' optimisers (PipelineOptions::optimizer)");
      PipelineStage& stage = pipe.stage(s);
      comm::Communicator& across = *stage_comms_.at(static_cast<size_t>(i)).at(static_cast<size_t>(s));
      stage_averaging_[static_cast<size_t>(i)].push_back(
          std::make_unique<ReplicaAveraging>(averaging_, stage.params(), stage.context(), across));
    }
  });
}

int64_t HybridExecutor::averaging_meetings() const {
  if (stage_averaging_.empty()) return 0;
  for (const auto& stage : stage_averaging_.front()) {
    if (stage) return stage->meetings();
  }
  return 0;
}

int64_t HybridExecutor::averaging_bytes_sent() const {
  int64_t bytes = 0;
  if (stage_averaging_.empty()) return bytes;
  for (const auto& stage : stage_averaging_.front()) {
    if (stage) bytes += stage->exchange().bytes_sent();
  }
  return bytes;
}

void HybridExecutor::enter_agreement() {
  if (!averaging_.active()) return;
  on_local_groups([&](int i, PipelineExecutor&) {
    for (const auto& stage : stage_averaging_[static_cast<size_t>(i)]) {
      if (stage) stage->enter_agreement(steps_);
    }
  });
}

void HybridExecutor::leave_agreement() {
  if (!averaging_.active()) return;
  on_local_groups([&](int i, PipelineExecutor&) {
    for (const auto& stage : stage_averaging_[static_cast<size_t>(i)]) {
      if (stage) stage->leave_agreement();
    }
  });
}

void HybridExecutor::restart_averaging() {
  if (!averaging_.active()) return;
  on_local_groups([&](int i, PipelineExecutor&) {
    for (const auto& stage : stage_averaging_[static_cast<size_t>(i)]) {
      if (stage) stage->restart();
    }
  });
}

std::vector<CheckpointExtraFile> HybridExecutor::averaging_checkpoint_files() {
  if (!averaging_.active()) return {};
  if (local_group_ >= 0) return gather_averaging_files();
  const int stages = groups_.front()->num_stages();
  CheckpointExtraFile file{
      std::string(kAveragingFileName), {}, averaging_file_metadata(averaging_, groups_count_, stages)};
  for (int s = 0; s < stages; ++s) {
    for (int g = 0; g < groups_count_; ++g) {
      PipelineExecutor& pipe = *groups_[static_cast<size_t>(g)];
      const ReplicaAveraging& averaging = *stage_averaging_[static_cast<size_t>(g)][static_cast<size_t>(s)];
      pipe.stage(s).context().synchronize();  // the file is written from the first stage's stream
      for (auto& [name, tensor] : replica_own_state(averaging.continuing_parameters(), *pipe.stage_optimizer(s))) {
        file.tensors.emplace_back(stage_tensor_name(s, replica_tensor_name(g, name)), tensor);
      }
    }
    for (auto& [name, tensor] : stage_averaging_[0][static_cast<size_t>(s)]->shared_state()) {
      file.tensors.emplace_back(stage_tensor_name(s, name), tensor);
    }
  }
  return {std::move(file)};
}

std::vector<CheckpointExtraFile> HybridExecutor::gather_averaging_files() {
  // Every stage's tensors on the host, each process's in its own slots (zeros elsewhere), summed
  // over the groups (across_) and the pipeline's processes: world rank 0 then holds them all.
  PipelineExecutor& pipe = *groups_.front();
  comm::Communicator& positions = *pipe.processes();
  const int stages = pipe.num_stages();
  Context host(Device::cpu());
  Tensor sizes = Tensor::empty_host({stages}, DType::f64);  // each stage's flat parameters
  NamedTensors parts, shared;                               // a replica's own parts; the stage's shared state
  DType dtype = kDefaultDType;                              // set from this process's stage parameters below
  for (int s = 0; s < stages; ++s) {
    sizes.data<double>()[s] = 0;
    if (!pipe.local(s)) continue;
    const Tensor& flat = pipe.stage_params(s).params_flat();
    sizes.data<double>()[s] = static_cast<double>(flat.numel());
    dtype = flat.dtype();
    parts = replica_own_state(flat, *pipe.stage_optimizer(s));
    shared = stage_averaging_[0][static_cast<size_t>(s)]->shared_state();
  }
  positions.all_reduce(sizes, comm::ReduceOp::sum, host.stream())->wait();
  const auto per_replica = static_cast<int64_t>(parts.size());
  const bool writer = local_group_ == 0 && positions.rank() == 0;
  CheckpointExtraFile file{
      std::string(kAveragingFileName), {}, averaging_file_metadata(averaging_, groups_count_, stages)};
  for (int s = 0; s < stages; ++s) {
    const auto n = static_cast<int64_t>(sizes.data<double>()[s]);
    const auto slot = [n](int64_t k) { return std::pair<int64_t, int64_t>{k * n, (k + 1) * n}; };
    Tensor all = Tensor::empty_host({(groups_count_ * per_replica + static_cast<int64_t>(shared.size())) * n}, dtype);
    all.fill(0, host.stream());
    if (pipe.local(s)) {
      pipe.stage(s).context().synchronize();
      const ReplicaAveraging& averaging = *stage_averaging_[0][static_cast<size_t>(s)];
      NamedTensors mine = replica_own_state(averaging.continuing_parameters(), *pipe.stage_optimizer(s));
      for (int64_t k = 0; k < per_replica; ++k) {
        const auto [begin, end] = slot(local_group_ * per_replica + k);
        copy_tensor(all.slice(begin, end), mine[static_cast<size_t>(k)].second, host);
      }
      const NamedTensors state = averaging.shared_state();
      for (size_t k = 0; k < state.size() && local_group_ == 0; ++k) {
        const auto [begin, end] = slot(groups_count_ * per_replica + static_cast<int64_t>(k));
        copy_tensor(all.slice(begin, end), state[k].second, host);
      }
    }
    host.synchronize();
    across_->all_reduce(all, comm::ReduceOp::sum, host.stream())->wait();
    positions.all_reduce(all, comm::ReduceOp::sum, host.stream())->wait();
    if (!writer) continue;
    for (int g = 0; g < groups_count_; ++g) {
      for (int64_t k = 0; k < per_replica; ++k) {
        const auto [begin, end] = slot(g * per_replica + k);
        file.tensors.emplace_back(stage_tensor_name(s, replica_tensor_name(g, parts[static_cast<size_t>(k)].first)),
                                  all.slice(begin, end));
      }
    }
    for (size_t k = 0; k < shared.size(); ++k) {
      const auto [begin, end] = slot(groups_count_ * per_replica + static_cast<int64_t>(k));
      file.tensors.emplace_back(stage_tensor_name(s, shared[k].first), all.slice(begin, end));
    }
  }
  if (!writer) return {};
  return {std::move(file)};
}

void HybridExecutor::load_averaging_state(const std::string& dir, int64_t steps) {
  steps_ = steps;  // the period goes on where the run was
  const std::optional<SafetensorsFile> file = open_averaging_file(dir, averaging_);
  if (!file) return restart_averaging();
  check_averaging_file(*file, averaging_, groups_count_, groups_.front()->num_stages());
  // Every process checks its stages' tensors before any is read.
  const auto own_tensors = [&](int i, PipelineExecutor& pipe, int s) {
    const int g = local_group_ >= 0 ? local_group_ : i;
    NamedTensors own;
    for (auto& [name, tensor] : replica_own_state(pipe.stage_params(s).params_flat(), *pipe.stage_optimizer(s))) {
      own.emplace_back(stage_tensor_name(s, replica_tensor_name(g, name)), tensor);
    }
    return own;
  };
  for (size_t i = 0; i < groups_.size(); ++i) {
    PipelineExecutor& pipe = *groups_[i];
    for (int s = 0; s < pipe.num_stages(); ++s) {
      if (!pipe.local(s)) continue;
      NamedTensors expected = own_tensors(static_cast<int>(i), pipe, s);
      for (auto& [name, tensor] : stage_averaging_[i][static_cast<size_t>(s)]->shared_state()) {
        expected.emplace_back(stage_tensor_name(s, name), tensor);
      }
      check_averaging_tensors(*file, expected);
    }
  }
  on_local_groups([&](int i, PipelineExecutor& pipe) {
    for (int s = 0; s < pipe.num_stages(); ++s) {
      if (!pipe.local(s)) continue;
      Context& ctx = pipe.stage(s).context();
      for (auto& [name, tensor] : own_tensors(i, pipe, s)) file->read_into(name, tensor, ctx.stream());
      stage_averaging_[static_cast<size_t>(i)][static_cast<size_t>(s)]->load_shared_state(*file,
                                                                                          stage_tensor_name(s, ""));
      ctx.synchronize();
    }
  });
}

}  // namespace baton::parallel
