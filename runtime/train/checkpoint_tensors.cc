// The tensors of checkpoint files: parameters and buffers by name, optimiser state per parameter.
#include <algorithm>
#include <unordered_set>

#include "runtime/core/error.h"
#include "runtime/train/checkpoint.h"

namespace baton {
namespace {

// The parameters in the default layout's order, whatever the store's layout: files list them alike.
std::vector<const ParamEntry*> in_default_order(const ParamStore& params) {
  std::vector<const ParamEntry*> out;
  for (const ParamEntry& e : params.params()) out.push_back(&e);
  std::sort(out.begin(), out.end(),
            [](const ParamEntry* a, const ParamEntry* b) { return a->init_offset < b->init_offset; });
  return out;
}

}  // namespace

NamedTensors model_tensors(const ParamStore& params) {
  NamedTensors out;
  for (const ParamEntry* e : in_default_order(params)) out.emplace_back(e->name, params.param(e->name));
  for (const BufferEntry& b : params.buffers()) out.emplace_back(b.name, params.buffer(b.name));
  return out;
}

NamedTensors optimizer_tensors(const ParamStore& params, const Optimizer& optimizer) {
  NamedTensors out;
  for (const auto& [state_name, flat] : optimizer.state()) {
    BATON_CHECK(flat.defined() && flat.shape() == params.params_flat().shape() && flat.dtype() == params.dtype(),
                "optimiser state '", state_name, "' is not laid out like the parameters (",
                flat.defined() ? dtype_name(flat.dtype()) : "undefined", " ", flat.shape().str(), ", expected ",
                dtype_name(params.dtype()), " ", params.params_flat().shape().str(), ")");
    for (const ParamEntry* e : in_default_order(params)) {
      out.emplace_back(state_name + "." + e->name,
                       flat.slice(e->offset, e->offset + e->shape.numel()).reshape(e->shape));
    }
  }
  return out;
}

namespace {

// Appends `more` to `all`, refusing a name `all` already has.
void append_unique(NamedTensors& all, NamedTensors more, std::unordered_set<std::string>& seen, size_t shard) {
  for (auto& named : more) {
    BATON_CHECK(seen.insert(named.first).second, "checkpoint shards: tensor '", named.first, "' of shard ", shard,
                " is also in an earlier shard (each parameter and buffer belongs to exactly one)");
    all.push_back(std::move(named));
  }
}

}  // namespace

NamedTensors model_tensors(const std::vector<CheckpointShard>& shards) {
  NamedTensors all;
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < shards.size(); ++i) append_unique(all, model_tensors(*shards[i].params), seen, i);
  return all;
}

NamedTensors optimizer_tensors(const std::vector<CheckpointShard>& shards) {
  NamedTensors all;
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < shards.size(); ++i) {
    BATON_CHECK(shards[i].optimizer != nullptr, "checkpoint shard ", i, " has no optimiser");
    append_unique(all, optimizer_tensors(*shards[i].params, *shards[i].optimizer), seen, i);
  }
  return all;
}

const Optimizer* common_optimizer(const std::vector<CheckpointShard>& shards) {
  BATON_CHECK(!shards.empty(), "a checkpoint needs at least one shard");
  const Optimizer* first = shards[0].optimizer;
  for (size_t i = 1; i < shards.size(); ++i) {
    const Optimizer* o = shards[i].optimizer;
    BATON_CHECK((o == nullptr) == (first == nullptr), "checkpoint shards: shard ", i, (o ? " has" : " has no"),
                " optimiser, shard 0", (first ? " has one" : " has none"));
    if (o == nullptr) continue;
    BATON_CHECK(o->type() == first->type() && o->config() == first->config(), "checkpoint shards: shard ", i,
                "'s optimiser (", o->type(), " ", o->config().dump(), ") differs from shard 0's (", first->type(), " ",
                first->config().dump(), ")");
    BATON_CHECK(o->steps() == first->steps(), "checkpoint shards: shard ", i, "'s optimiser has taken ", o->steps(),
                " steps, shard 0's ", first->steps());
  }
  return first;
}

void save_weights(const std::string& path, const ParamStore& params, Context& ctx,
                  const std::map<std::string, std::string>& metadata) {
  save_safetensors(path, model_tensors(params), metadata, ctx.stream());
}

}  // namespace baton
