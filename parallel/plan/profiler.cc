// Measured per-node forward/backward times through the executor's node hook.
#include "parallel/plan/profiler.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "kernels/random.h"
#include "parallel/plan/analytic_profile.h"
#include "runtime/core/context.h"
#include "runtime/core/cpu_threads.h"
#include "runtime/core/error.h"
#include "runtime/core/stop_request.h"
#include "runtime/core/stream.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/param_store.h"
#include "runtime/graph/tape.h"
#include "runtime/train/optimizer.h"

namespace baton::parallel {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Classes of the loss reading "labels": the last dimension of the loss's other (logits) input.
int64_t classes_for_labels(const Graph& g, ValueId labels) {
  for (NodeId c : g.value(labels).consumers) {
    for (ValueId in : g.node(c).inputs) {
      if (in != labels && g.value(in).shape.rank() >= 2) return g.value(in).shape[-1];
    }
  }
  return 2;
}

std::vector<Tensor> random_inputs(const Graph& g, const Executor& ex, Context& ctx, int64_t batch, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (ValueId v : ex.input_values()) {
    const ValueInfo& info = g.value(v);
    std::vector<int64_t> dims = info.shape.dims();
    if (!dims.empty()) dims[0] = batch;
    const Shape shape(dims);
    if (info.dtype == DType::i64) {
      const int64_t classes = classes_for_labels(g, v);
      std::vector<int64_t> labels(static_cast<size_t>(shape.numel()));
      for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 7919 + seed) % classes);
      inputs.push_back(Tensor::from_vector(labels, shape, ctx.stream()));
    } else {
      Tensor t = Tensor::empty(shape, info.dtype, ctx);
      kernels::normal(ctx, t, seed, static_cast<uint64_t>(v) << 32);
      inputs.push_back(t);
    }
  }
  return inputs;
}

// Start and end events of every node's forward and backward in one run.
class NodeTimer {
 public:
  NodeTimer(Device device, int nodes) {
    for (int i = 0; i < 4 * nodes; ++i) events_.emplace_back(device, true);
  }
  void mark(const Stream& stream, int position, Phase phase, bool begin) {
    events_[4 * position + (phase == Phase::backward ? 2 : 0) + (begin ? 0 : 1)].record(stream);
  }
  double ms(int position, Phase phase) const {
    const int base = 4 * position + (phase == Phase::backward ? 2 : 0);
    if (!events_[base].recorded() || !events_[base + 1].recorded()) return 0;  // no backward through it
    return events_[base].elapsed_ms(events_[base + 1]);
  }

 private:
  std::vector<Event> events_;
};

// One forward and backward of the whole graph, finished on the host.
void train_pass(Executor& executor, Context& ctx, const std::vector<Tensor>& inputs, uint64_t seed) {
  Tape tape;
  executor.forward(ctx, inputs, tape, Mode::train, seed);
  executor.backward(ctx, tape, std::vector<Tensor>(executor.output_values().size()));
  ctx.stream().synchronize();
}

// Copies of the model training beside the timed one on the same CPU (ProfilerOptions::busy_neighbours),
// each on its own thread with the same thread count, until destroyed: the timed worker then shares
// the memory system and caches as a stage worker does while the others compute.
class BusyNeighbours {
 public:
  BusyNeighbours(const Graph& g, Device device, int count, int64_t batch, const ProfilerOptions& options) {
    const int threads = cpu_threads();
    for (int k = 0; k < count; ++k) {
      workers_.emplace_back([this, &g, device, batch, options, threads, k] {
        try {
          const CpuThreadsScope scope(threads);
          Context ctx(device);
          const std::vector<NodeId> order = g.topological_order();
          ParamStore params(g, order, options.precision.master(), ctx);
          params.initialize(ctx, options.seed + 1 + static_cast<uint64_t>(k));
          Executor executor(g, order, params);
          const std::vector<Tensor> inputs = random_inputs(g, executor, ctx, batch, options.seed + 1);
          ready_.fetch_add(1);
          for (uint64_t run = 0; !stop_.load(); ++run) train_pass(executor, ctx, inputs, run);
        } catch (...) {
          std::lock_guard lock(mutex_);
          if (!error_) error_ = std::current_exception();
          ready_.fetch_add(1);
        }
      });
    }
    while (ready_.load() < count) std::this_thread::yield();  // every copy is computing
  }
  ~BusyNeighbours() { stop_.store(true); }  // the jthreads join

  // Rethrows the first failure of a copy (its timing would not be what was asked for).
  void check() {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> ready_{0};
  std::mutex mutex_;
  std::exception_ptr error_;
  std::vector<std::jthread> workers_;  // last: joined before the members above go
};

}  // namespace

Profile measure_profile(const Graph& g, const std::string& model, Device device, const ProfilerOptions& options) {
  BATON_CHECK(!options.batch_sizes.empty(), "profile: no batch sizes");
  BATON_CHECK(options.repeats >= 1 && options.warmup >= 0, "profile: repeats must be >= 1 and warmup >= 0");
  Profile p = profile_structure(g, model);
  p.device = device.str();
  p.source = "measured";
  p.batch_sizes = options.batch_sizes;
  std::sort(p.batch_sizes.begin(), p.batch_sizes.end());
  p.batch_sizes.erase(std::unique(p.batch_sizes.begin(), p.batch_sizes.end()), p.batch_sizes.end());
  BATON_CHECK(p.batch_sizes.front() >= 1, "profile: batch sizes must be >= 1");
  BATON_CHECK(options.cpu_threads >= 0, "profile: cpu_threads must be >= 0 (0: the caller's), got ",
              options.cpu_threads);
  std::optional<CpuThreadsScope> threads;
  if (device.is_cpu() && options.cpu_threads > 0) threads.emplace(options.cpu_threads);
  BATON_CHECK(options.busy_neighbours >= 0 && (options.busy_neighbours == 0 || device.is_cpu()),
              "profile: busy_neighbours must be >= 0, and is for CPU devices only (got ", options.busy_neighbours,
              " on ", device.str(), ")");

  Context ctx(device);
  ctx.set_allow_tf32(options.allow_tf32);
  ctx.set_channels_last(options.channels_last);
  const std::vector<NodeId> order = g.topological_order();
  ParamStore params(g, order, options.precision.master(), ctx);
  params.initialize(ctx, options.seed);
  Executor executor(g, order, params);
  std::unordered_map<NodeId, int> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  NodeTimer timer(device, static_cast<int>(order.size()));
  executor.set_node_hook(
      [&](NodeId n, Phase phase, bool begin) { timer.mark(ctx.stream(), position.at(n), phase, begin); });

  const int nodes = static_cast<int>(order.size());
  for (int b : p.batch_sizes) {
    const std::vector<Tensor> inputs = random_inputs(g, executor, ctx, b, options.seed);
    std::vector<std::vector<double>> fwd(nodes), bwd(nodes);
    std::optional<BusyNeighbours> neighbours;
    if (options.busy_neighbours > 0) neighbours.emplace(g, device, options.busy_neighbours, b, options);
    for (int run = 0; run < options.warmup + options.repeats; ++run) {
      check_stop_request("profiling " + model);  // a pass of a big model takes seconds
      train_pass(executor, ctx, inputs, options.seed + static_cast<uint64_t>(run));
      if (run < options.warmup) continue;
      for (int i = 0; i < nodes; ++i) {
        fwd[i].push_back(timer.ms(i, Phase::forward));
        bwd[i].push_back(timer.ms(i, Phase::backward));
      }
    }
    if (neighbours) {
      neighbours->check();
      neighbours.reset();
    }
    for (int i = 0; i < nodes; ++i) {
      p.nodes[i].fwd_ms.push_back(median(fwd[i]));
      p.nodes[i].bwd_ms.push_back(median(bwd[i]));
    }
  }

  // The optimiser step over all parameters, per parameter byte.
  const OptimizerTraffic traffic = optimizer_traffic(options.optimizer);
  p.optimizer_state_factor = traffic.state_factor;
  const int64_t bytes = p.total_param_bytes();
  if (bytes > 0) {
    auto optimizer = make_optimizer({{"type", options.optimizer}}, params, ctx, "profile optimizer");
    std::vector<double> ms;
    Event start(device, true), end(device, true);
    for (int run = 0; run < options.warmup + options.repeats; ++run) {
      start.record(ctx.stream());
      optimizer->step(ctx, 1e-6);
      end.record(ctx.stream());
      end.synchronize();
      if (run >= options.warmup) ms.push_back(start.elapsed_ms(end));
    }
    p.optimizer_ms_per_param_byte = median(ms) / static_cast<double>(bytes);
  }
  p.validate("measured profile of " + model);
  return p;
}

}  // namespace baton::parallel
