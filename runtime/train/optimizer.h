// Optimisers over a ParamStore's flat buffers: one fused kernel call per weight-decay group
// (parameters with decay, then biases and BatchNorm parameters), with their state (momentum, Adam
// moments) flat as well, so a stage's whole update is one or two passes over memory.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/param_store.h"

namespace baton {

struct SgdConfig {
  double momentum = 0.9;
  double dampening = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  bool decoupled_weight_decay = false;
  bool decay_bias_and_bn = false;  // false: biases and BatchNorm parameters get no weight decay
};

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  bool decay_bias_and_bn = false;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string_view type() const = 0;
  // One update of every parameter from its gradient, with learning rate `lr`.
  virtual void step(Context& ctx, double lr) = 0;
  // Updates done so far.
  int64_t steps() const { return steps_; }
  void set_steps(int64_t steps) { steps_ = steps; }
  // The optimiser's state tensors by name ("momentum", "exp_avg", ...), flat like the parameters:
  // checkpoints save and restore them.
  virtual std::vector<std::pair<std::string, Tensor>> state() const = 0;
  virtual nlohmann::json config() const = 0;

 protected:
  int64_t steps_ = 0;
};

class Sgd final : public Optimizer {
 public:
  Sgd(ParamStore& params, Context& ctx, SgdConfig config);
  std::string_view type() const override { return "sgd"; }
  void step(Context& ctx, double lr) override;
  std::vector<std::pair<std::string, Tensor>> state() const override;
  nlohmann::json config() const override;

 private:
  ParamStore& params_;
  SgdConfig config_;
  Tensor momentum_;
};

class AdamW final : public Optimizer {
 public:
  AdamW(ParamStore& params, Context& ctx, AdamWConfig config);
  std::string_view type() const override { return "adamw"; }
  void step(Context& ctx, double lr) override;
  std::vector<std::pair<std::string, Tensor>> state() const override;
  nlohmann::json config() const override;

 private:
  ParamStore& params_;
  AdamWConfig config_;
  Tensor exp_avg_, exp_avg_sq_;
};

// {"type": "sgd", "momentum": 0.9, "nesterov": true, "weight_decay": 5e-4, ...} or
// {"type": "adamw", "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, ...}.
// Errors name `where` and the field.
std::unique_ptr<Optimizer> make_optimizer(const nlohmann::json& config, ParamStore& params, Context& ctx,
                                          std::string_view where);
// The same checks of `config` alone, before a run builds anything.
void check_optimizer_config(const nlohmann::json& config, std::string_view where);

}  // namespace baton
