// SGD and AdamW over flat parameter buffers.
#include "runtime/train/optimizer.h"

#include <variant>

#include "kernels/optimizer.h"
#include "runtime/core/error.h"
#include "runtime/graph/json_config.h"

namespace baton {
namespace {

// The weight-decay segments of the flat buffers (two in the default layout: decay, then none).
struct Group {
  int64_t begin, end;
  bool decays;
};

std::vector<Group> groups(const ParamStore& p) {
  std::vector<Group> out;
  for (const ParamSegment& s : p.segments()) out.push_back({s.begin, s.end, s.weight_decay});
  return out;
}

Tensor zeros_like(const Tensor& t, Context& ctx) {
  Tensor z = Tensor::empty(t.shape(), t.dtype(), ctx);
  z.fill(0.0, ctx.stream());
  return z;
}

}  // namespace

Sgd::Sgd(ParamStore& params, Context& ctx, SgdConfig config) : params_(params), config_(config) {
  if (config_.momentum > 0) momentum_ = zeros_like(params.params_flat(), ctx);
}

void Sgd::step(Context& ctx, double lr) {
  for (const Group& g : groups(params_)) {
    kernels::SgdParams p{.lr = lr,
                         .momentum = config_.momentum,
                         .dampening = config_.dampening,
                         .nesterov = config_.nesterov,
                         .weight_decay = g.decays || config_.decay_bias_and_bn ? config_.weight_decay : 0.0,
                         .decoupled_weight_decay = config_.decoupled_weight_decay,
                         .first_step = steps_ == 0};
    kernels::sgd_step(ctx, params_.params_flat().slice(g.begin, g.end), params_.grads_flat().slice(g.begin, g.end),
                      momentum_.defined() ? momentum_.slice(g.begin, g.end) : Tensor(), p);
  }
  ++steps_;
}

std::vector<std::pair<std::string, Tensor>> Sgd::state() const {
  if (!momentum_.defined()) return {};
  return {{"momentum", momentum_}};
}

nlohmann::json Sgd::config() const {
  return {{"type", "sgd"},
          {"momentum", config_.momentum},
          {"dampening", config_.dampening},
          {"nesterov", config_.nesterov},
          {"weight_decay", config_.weight_decay},
          {"decoupled_weight_decay", config_.decoupled_weight_decay},
          {"decay_bias_and_bn", config_.decay_bias_and_bn}};
}

AdamW::AdamW(ParamStore& params, Context& ctx, AdamWConfig config)
    : params_(params),
      config_(config),
      exp_avg_(zeros_like(params.params_flat(), ctx)),
      exp_avg_sq_(zeros_like(params.params_flat(), ctx)) {}

void AdamW::step(Context& ctx, double lr) {
  for (const Group& g : groups(params_)) {
    kernels::AdamWParams p{.lr = lr,
                           .beta1 = config_.beta1,
                           .beta2 = config_.beta2,
                           .eps = config_.eps,
                           .weight_decay = g.decays || config_.decay_bias_and_bn ? config_.weight_decay : 0.0,
                           .step = steps_ + 1};
    kernels::adamw_step(ctx, params_.params_flat().slice(g.begin, g.end), params_.grads_flat().slice(g.begin, g.end),
                        exp_avg_.slice(g.begin, g.end), exp_avg_sq_.slice(g.begin, g.end), p);
  }
  ++steps_;
}

std::vector<std::pair<std::string, Tensor>> AdamW::state() const {
  return {{"exp_avg", exp_avg_}, {"exp_avg_sq", exp_avg_sq_}};
}

nlohmann::json AdamW::config() const {
  return {{"type", "adamw"},
          {"beta1", config_.beta1},
          {"beta2", config_.beta2},
          {"eps", config_.eps},
          {"weight_decay", config_.weight_decay},
          {"decay_bias_and_bn", config_.decay_bias_and_bn}};
}

namespace {

// The optimiser's type and settings from its JSON config, checked; errors name `what`.
std::variant<SgdConfig, AdamWConfig> optimizer_settings(const nlohmann::json& config, const std::string& what) {
  BATON_CHECK(config.is_object() && config.contains("type") && config["type"].is_string(), what,
              ": optimiser config needs a \"type\": \"sgd\" or \"adamw\"");
  const std::string type = config["type"].get<std::string>();
  if (type == "sgd") {
    JsonConfig c(
        config, what,
        {"type", "momentum", "dampening", "nesterov", "weight_decay", "decoupled_weight_decay", "decay_bias_and_bn"});
    SgdConfig s;
    s.momentum = c.get_double("momentum", s.momentum);
    s.dampening = c.get_double("dampening", s.dampening);
    s.nesterov = c.get_bool("nesterov", s.nesterov);
    s.weight_decay = c.get_double("weight_decay", s.weight_decay);
    s.decoupled_weight_decay = c.get_bool("decoupled_weight_decay", s.decoupled_weight_decay);
    s.decay_bias_and_bn = c.get_bool("decay_bias_and_bn", s.decay_bias_and_bn);
    BATON_CHECK(s.momentum >= 0 && s.momentum < 1, what, ": momentum must be in [0, 1), got ", s.momentum);
    BATON_CHECK(s.weight_decay >= 0, what, ": weight_decay must be >= 0, got ", s.weight_decay);
    BATON_CHECK(!s.nesterov || (s.momentum > 0 && s.dampening == 0), what,
                ": nesterov needs momentum > 0 and dampening 0 (plain SGD: --momentum 0 --no-nesterov, or "
                "\"nesterov\": false)");
    return s;
  }
  if (type == "adamw") {
    JsonConfig c(config, what, {"type", "beta1", "beta2", "eps", "weight_decay", "decay_bias_and_bn"});
    AdamWConfig a;
    a.beta1 = c.get_double("beta1", a.beta1);
    a.beta2 = c.get_double("beta2", a.beta2);
    a.eps = c.get_double("eps", a.eps);
    a.weight_decay = c.get_double("weight_decay", a.weight_decay);
    a.decay_bias_and_bn = c.get_bool("decay_bias_and_bn", a.decay_bias_and_bn);
    BATON_CHECK(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1, what,
                ": beta1 and beta2 must be in [0, 1)");
    BATON_CHECK(a.eps > 0, what, ": eps must be > 0, got ", a.eps);
    BATON_CHECK(a.weight_decay >= 0, what, ": weight_decay must be >= 0, got ", a.weight_decay);
    return a;
  }
  BATON_FAIL(what, ": field 'type' is \"", type, "\", expected \"sgd\" or \"adamw\"");
}

}  // namespace

void check_optimizer_config(const nlohmann::json& config, std::string_view where) {
  (void)optimizer_settings(config, std::string(where));
}

std::unique_ptr<Optimizer> make_optimizer(const nlohmann::json& config, ParamStore& params, Context& ctx,
                                          std::string_view where) {
  const auto settings = optimizer_settings(config, std::string(where));
  if (const auto* sgd = std::get_if<SgdConfig>(&settings)) return std::make_unique<Sgd>(params, ctx, *sgd);
  return std::make_unique<AdamW>(params, ctx, std::get<AdamWConfig>(settings));
}

}  // namespace baton
