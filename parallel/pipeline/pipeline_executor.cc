// PipelineExecutor: construction (stages, routes, links, validation), parameter loading, and the
// step: one host worker thread per pipeline position, errors collected and rethrown.
#include "parallel/pipeline/pipeline_executor.h"

#include <algorithm>
#include <string>
#include <thread>
#include <unordered_map>

#include "parallel/analytic_profile.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {

uint64_t micro_batch_seed(uint64_t step_seed, int micro_batch) {
  return step_seed + static_cast<uint64_t>(micro_batch) * 0x9E3779B97F4A7C15ull;
}

PipelineExecutor::PipelineExecutor(const Graph& graph, Plan plan, Schedule schedule, std::vector<Device> devices,
                                   PipelineOptions options)
    : graph_(graph), plan_(std::move(plan)), schedule_(std::move(schedule)), options_(std::move(options)) {
  const int num = plan_.num_stages();
  for (int s = 0; s < num; ++s) {
    const int replicas = plan_.stages[static_cast<size_t>(s)].replicas;
    BATON_CHECK(replicas == 1, "pipeline stage ", s, " has ", replicas,
                " replicas: data-parallel replicas inside a pipeline are not supported yet");
  }
  const Profile profile = profile_structure(graph, options_.model);
  validate_plan(plan_, profile);
  BATON_CHECK(schedule_.stages == num, "the schedule has ", schedule_.stages, " stages but the plan has ", num);
  BATON_CHECK(schedule_.micro_batches == plan_.micro_batches, "the schedule has ", schedule_.micro_batches,
              " micro-batches but the plan has ", plan_.micro_batches);
  BATON_CHECK(static_cast<int>(schedule_.programs.size()) == schedule_.devices, "the schedule has ",
              schedule_.programs.size(), " instruction lists for ", schedule_.devices, " pipeline positions");
  const std::vector<std::vector<int>> consumers = stage_consumers(plan_, profile);
  try {
    validate_schedule(schedule_, consumers);
  } catch (Error& e) {
    e.add_context("while checking the schedule against the plan's stages before running it");
    throw;
  }
  BATON_CHECK(static_cast<int>(devices.size()) == num, "the pipeline has ", num, " stages but ", devices.size(),
              " devices were given (one per stage)");
  BATON_CHECK(options_.recompute.empty() || static_cast<int>(options_.recompute.size()) == num,
              "PipelineOptions::recompute has ", options_.recompute.size(), " entries for ", num, " stages");

  const std::vector<NodeId> order = graph.topological_order();
  std::unordered_map<NodeId, int> stage_of;
  for (int s = 0; s < num; ++s) {
    std::vector<NodeId> nodes;
    for (int i : plan_.stages[static_cast<size_t>(s)].nodes) {
      nodes.push_back(order.at(static_cast<size_t>(i)));
      stage_of[nodes.back()] = s;
    }
    const bool recompute = !options_.recompute.empty() && options_.recompute[static_cast<size_t>(s)];
    stages_.push_back(std::make_unique<PipelineStage>(graph, s, std::move(nodes), devices[static_cast<size_t>(s)],
                                                      options_.dtype,
                                                      ExecutorOptions{.recompute = recompute,
                                                                      .defer_buffer_updates = options_.deferred_batch_norm}));
  }

  // Routes: each stage input comes from the batch or from its producer stage.
  sources_.resize(static_cast<size_t>(num));
  links_.assign(static_cast<size_t>(num), std::vector<std::vector<std::pair<size_t, size_t>>>(static_cast<size_t>(num)));
  for (int s = 0; s < num; ++s) {
    const std::vector<ValueId>& in = stages_[static_cast<size_t>(s)]->executor().input_values();
    for (size_t k = 0; k < in.size(); ++k) {
      const ValueInfo& info = graph.value(in[k]);
      StageInput source;
      if (info.producer < 0) {
        const auto& gi = graph.inputs();
        source.graph_input = static_cast<int>(std::find(gi.begin(), gi.end(), in[k]) - gi.begin());
      } else {
        source.producer_stage = stage_of.at(info.producer);
        const std::vector<ValueId>& out = stages_[static_cast<size_t>(source.producer_stage)]->executor().output_values();
        const auto at = static_cast<size_t>(std::find(out.begin(), out.end(), in[k]) - out.begin());
        BATON_CHECK(at < out.size(), "value '", info.name, "' is not an output of stage ", source.producer_stage);
        links_[static_cast<size_t>(source.producer_stage)][static_cast<size_t>(s)].emplace_back(at, k);
      }
      sources_[static_cast<size_t>(s)].push_back(source);
    }
  }
  streams_.resize(static_cast<size_t>(num));
  for (int i = 0; i < num; ++i) {
    for (int j = 0; j < num; ++j) {
      streams_[static_cast<size_t>(i)].push_back(LinkStreams{});
    }
  }
  for (int i = 0; i < num; ++i) {
    for (int j = 0; j < num; ++j) {
      const bool linked = !links_[static_cast<size_t>(i)][static_cast<size_t>(j)].empty();
      const auto& expected = consumers[static_cast<size_t>(i)];
      BATON_CHECK(linked == (std::find(expected.begin(), expected.end(), j) != expected.end()),
                  "stage ", i, " and stage ", j, ": the plan's consumers and the executors' boundary values disagree");
      if (!linked) continue;
      const Device a = devices[static_cast<size_t>(i)], b = devices[static_cast<size_t>(j)];
      streams_[static_cast<size_t>(i)][static_cast<size_t>(j)] = LinkStreams::create(a, b);  // activations
      streams_[static_cast<size_t>(j)][static_cast<size_t>(i)] = LinkStreams::create(b, a);  // gradients
    }
  }

  BATON_CHECK(!graph.outputs().empty(), "the graph has no output (the loss)");
  const ValueId loss = graph.outputs()[0];
  const ValueInfo& loss_info = graph.value(loss);
  BATON_CHECK(loss_info.producer >= 0 && loss_info.shape.numel() == 1 && is_floating(loss_info.dtype),
              "the graph's first output '", loss_info.name, "' is not a scalar loss");
  loss_stage_ = stage_of.at(loss_info.producer);
  const std::vector<ValueId>& loss_outputs = stages_[static_cast<size_t>(loss_stage_)]->executor().output_values();
  loss_output_ = static_cast<size_t>(std::find(loss_outputs.begin(), loss_outputs.end(), loss) - loss_outputs.begin());

  // Where each graph output comes from (evaluate returns them all).
  stage_graph_outputs_.resize(static_cast<size_t>(num));
  for (size_t g = 0; g < graph.outputs().size(); ++g) {
    const ValueInfo& info = graph.value(graph.outputs()[g]);
    BATON_CHECK(info.producer >= 0, "graph output '", info.name, "' is a graph input, not computed by a stage");
    const int s = stage_of.at(info.producer);
    const std::vector<ValueId>& out = stages_[static_cast<size_t>(s)]->executor().output_values();
    const auto at = static_cast<size_t>(std::find(out.begin(), out.end(), graph.outputs()[g]) - out.begin());
    BATON_CHECK(at < out.size(), "graph output '", info.name, "' is not an output of stage ", s);
    stage_graph_outputs_[static_cast<size_t>(s)].emplace_back(g, at);
    output_stage_.push_back(s);
  }

  if (!options_.optimizer.is_null()) {
    for (int s = 0; s < num; ++s) {
      PipelineStage& st = *stages_[static_cast<size_t>(s)];
      optimizers_.push_back(make_optimizer(options_.optimizer, st.params(), st.context(),
                                           "pipeline stage " + std::to_string(s) + " optimizer"));
    }
  }
  state_.resize(static_cast<size_t>(num));
}

PipelineExecutor::~PipelineExecutor() = default;

void PipelineExecutor::initialize(uint64_t seed) {
  Context host(Device::cpu());
  ParamStore whole(graph_, graph_.topological_order(), options_.dtype, host);
  whole.initialize(host, seed);
  load_parameters(whole);
}

void PipelineExecutor::load_parameters(const ParamStore& whole) {
  for (auto& stage : stages_) stage->load_from(whole);
  for (auto& stage : stages_) stage->context().synchronize();
}

void PipelineExecutor::store_parameters(ParamStore& whole, Context& ctx) {
  for (auto& stage : stages_) stage->context().synchronize();
  for (auto& stage : stages_) copy_by_name(stage->params(), whole, stage->params(), ctx);
  ctx.synchronize();
}

void PipelineExecutor::reset_step_state(int micro_batches, bool training) {
  mailbox_.reset();
  error_ = nullptr;
  const auto m = static_cast<size_t>(micro_batches);
  for (size_t s = 0; s < stages_.size(); ++s) {
    PipelineStage& stage = *stages_[s];
    auto st = std::make_unique<StageState>();
    st->tapes.resize(m);
    st->inputs.assign(m, std::vector<Tensor>(stage.executor().input_values().size()));
    st->outputs.resize(m);
    st->output_grads.assign(m, std::vector<Tensor>(stage.executor().output_values().size()));
    st->input_grads.resize(m);
    st->losses.resize(m);
    int consumers = 0, producers = 0;
    for (size_t j = 0; j < stages_.size(); ++j) {
      consumers += links_[s][j].empty() ? 0 : 1;
      producers += links_[j][s].empty() ? 0 : 1;
    }
    st->activation_sends_left.assign(m, consumers);
    st->gradient_sends_left.assign(m, producers);
    state_[s] = std::move(st);
    if (training) {
      stage.params().zero_grads(stage.context());
      stage.executor().discard_deferred_updates();  // what a failed step gathered
    }
  }
}

void PipelineExecutor::record_error(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(error);
  }
  mailbox_.stop();
}

namespace {

std::string where(const Instruction& ins, int position, size_t index) {
  std::string text = "in pipeline stage " + std::to_string(ins.stage);
  if (ins.micro_batch >= 0) text += ", micro-batch " + std::to_string(ins.micro_batch);
  text += " (" + describe(ins) + ", instruction " + std::to_string(index) + " of worker " + std::to_string(position) + ")";
  return text;
}

}  // namespace

void PipelineExecutor::run_position(const std::vector<Instruction>& program, int position) {
  size_t i = 0;
  try {
    for (; i < program.size(); ++i) {
      if (mailbox_.stopped()) return;
      execute(program[i], position);
    }
  } catch (const PipelineStopped&) {
    // Another worker failed; its error is the one reported.
  } catch (Error& e) {
    e.add_context(where(program[i], position, i));
    record_error(std::current_exception());
  } catch (const std::exception& e) {
    record_error(std::make_exception_ptr(Error(std::string(e.what()) + "\n  " + where(program[i], position, i))));
  } catch (...) {
    record_error(std::make_exception_ptr(Error("unknown exception\n  " + where(program[i], position, i))));
  }
}

void PipelineExecutor::split_inputs(const std::vector<Tensor>& inputs, int micro_batches, const char* what) {
  const std::vector<ValueId>& graph_inputs = graph_.inputs();
  BATON_CHECK(inputs.size() == graph_inputs.size(), "pipeline ", what, ": ", inputs.size(),
              " inputs given, the graph has ", graph_inputs.size());
  const int64_t n = inputs.empty() ? 0 : (inputs[0].defined() && inputs[0].rank() > 0 ? inputs[0].size(0) : 0);
  for (size_t g = 0; g < inputs.size(); ++g) {
    const std::string& name = graph_.value(graph_inputs[g]).name;
    BATON_CHECK(inputs[g].defined() && inputs[g].rank() > 0 && inputs[g].size(0) == n, "pipeline ", what, ": input '",
                name, "' must be a defined tensor with the batch (", n, ") in dimension 0");
  }
  BATON_CHECK(n >= micro_batches, "pipeline ", what, ": a batch of ", n, " cannot be split into ", micro_batches,
              " micro-batches");
  micro_inputs_.clear();
  for (const Tensor& t : inputs) micro_inputs_.push_back(t.split(micro_batches));
  loss_scale_.clear();
  for (const Tensor& part : micro_inputs_[0]) loss_scale_.push_back(static_cast<double>(part.size(0)) / static_cast<double>(n));
}

void PipelineExecutor::run_programs(const std::vector<std::vector<Instruction>>& programs) {
  {
    std::vector<std::jthread> workers;
    try {
      for (size_t p = 0; p < programs.size(); ++p) {
        workers.emplace_back([this, &programs, p] { run_position(programs[p], static_cast<int>(p)); });
      }
    } catch (...) {
      record_error(std::current_exception());
    }
  }  // joins every worker
  if (!error_) return;
  for (auto& stage : stages_) {
    try {
      stage->context().synchronize();
    } catch (...) {  // the first error is the one reported
    }
  }
  finish_run();
  std::exception_ptr error = error_;
  error_ = nullptr;
  std::rethrow_exception(error);
}

void PipelineExecutor::finish_run() {
  for (auto& st : state_) st.reset();
  micro_inputs_.clear();
  mailbox_.reset();
}

double PipelineExecutor::step(const std::vector<Tensor>& inputs, const StepOptions& options) {
  const int m = schedule_.micro_batches;
  split_inputs(inputs, m, "step");
  step_options_ = options;
  mode_ = Mode::train;
  reset_step_state(m, /*training=*/true);
  tracing_ = options.record_trace;
  if (tracing_) {
    std::vector<Stream> streams;
    for (auto& stage : stages_) streams.push_back(stage->context().stream());
    recorder().begin_step(streams);
  }
  run_programs(schedule_.programs);
  PipelineStage& last = *stages_[static_cast<size_t>(loss_stage_)];
  double loss = 0;
  for (int k = 0; k < m; ++k) {
    const Tensor& value = state_[static_cast<size_t>(loss_stage_)]->losses[static_cast<size_t>(k)];
    const double v = value.dtype() == DType::f64 ? value.to_vector<double>(last.context().stream())[0]
                                                 : static_cast<double>(value.to_vector<float>(last.context().stream())[0]);
    loss += v * loss_scale_[static_cast<size_t>(k)];
  }
  for (auto& stage : stages_) stage->context().synchronize();
  if (tracing_) recorder().end_step();
  finish_run();
  return loss;
}

std::vector<std::vector<Instruction>> PipelineExecutor::forward_programs(int micro_batches) const {
  const int num = num_stages();
  std::vector<std::vector<Instruction>> programs(static_cast<size_t>(schedule_.devices));
  // Micro-batch by micro-batch, each position's stages in order: every receive waits for a send
  // issued earlier in the same (micro-batch, stage) order, so no position waits on itself.
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int s = 0; s < num; ++s) {
      std::vector<Instruction>& program = programs[static_cast<size_t>(schedule_.position_of(s))];
      for (int j = 0; j < s; ++j) {
        if (!links_[static_cast<size_t>(j)][static_cast<size_t>(s)].empty()) {
          program.push_back({.op = Op::recv_activation, .stage = s, .micro_batch = mb, .peer = j});
        }
      }
      program.push_back({.op = Op::forward, .stage = s, .micro_batch = mb});
      for (int j = s + 1; j < num; ++j) {
        if (!links_[static_cast<size_t>(s)][static_cast<size_t>(j)].empty()) {
          program.push_back({.op = Op::send_activation, .stage = s, .micro_batch = mb, .peer = j});
        }
      }
    }
  }
  return programs;
}

PipelineOutputs PipelineExecutor::evaluate(const std::vector<Tensor>& inputs) {
  const int64_t n = !inputs.empty() && inputs[0].defined() && inputs[0].rank() > 0 ? inputs[0].size(0) : 0;
  const int m = static_cast<int>(std::min<int64_t>(schedule_.micro_batches, std::max<int64_t>(n, 1)));
  split_inputs(inputs, m, "evaluate");
  step_options_ = {};
  mode_ = Mode::eval;
  tracing_ = false;
  reset_step_state(m, /*training=*/false);
  results_.assign(graph_.outputs().size(), std::vector<Tensor>(static_cast<size_t>(m)));
  run_programs(forward_programs(m));
  for (auto& stage : stages_) stage->context().synchronize();
  PipelineOutputs result;
  result.outputs = std::move(results_);
  for (const Tensor& part : micro_inputs_[0]) result.micro_batch_sizes.push_back(part.size(0));
  result.output_stage = output_stage_;
  results_.clear();
  finish_run();
  return result;
}

}  // namespace baton::parallel
