// `baton bench layers`: ResNet-50's distinct convolutions at 224×224 and its Linear(2048 -> 1000)
// classifier, through the Layer interface (forward allocates its output; backward computes the
// input gradient where a network needs it and accumulates the parameter gradients). For each: the
// median forward and backward times, the achieved TFLOP/s, and beside them the same cuDNN / cuBLAS
// calls made directly (descriptors, workspace and algorithm fixed beforehand), so the overhead
// column is what baton adds over the library. On a CPU device the direct column is "n/a".
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "kernels/random.h"
#include "layers/conv.h"
#include "layers/linear.h"
#include "runtime/core/atomic_file.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

constexpr const char* kLinearNote = "baton adds the bias and its gradient; the direct column is the GEMMs alone";
constexpr const char* kBatchNormSkipped = "BatchNorm2d (its kernels are not on this branch yet)";

struct BenchOptions {
  std::string device;  // empty: cuda:0 when a GPU is present, else cpu
  int64_t batch = 0;   // 0: 32 on a GPU, 2 on the CPU
  std::string json_path;
  bool tf32 = false;
};

// One distinct convolution of ResNet-50 (torchvision, stride on the 3×3) and how often it occurs.
struct ConvShape {
  std::string name;  // where it first occurs
  int64_t in, out, kernel, stride, size;
  int count = 0;
};

std::vector<ConvShape> resnet50_convolutions() {
  std::vector<ConvShape> shapes;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>, size_t> index;
  auto add = [&](const std::string& name, int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t size) {
    const auto key = std::make_tuple(in, out, kernel, stride, size);
    const auto [it, fresh] = index.emplace(key, shapes.size());
    if (fresh) shapes.push_back({name, in, out, kernel, stride, size});
    ++shapes[it->second].count;
  };
  add("conv1", 3, 64, 7, 2, 224);
  const int64_t widths[] = {64, 128, 256, 512}, blocks[] = {3, 4, 6, 3};
  int64_t in = 64, size = 56;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = widths[stage], out = 4 * width;
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
      const int64_t stride = b == 0 && stage > 0 ? 2 : 1;
      add(prefix + "conv1", in, width, 1, 1, size);
      add(prefix + "conv2", width, width, 3, stride, size);
      add(prefix + "conv3", width, out, 1, 1, size / stride);
      if (b == 0) add(prefix + "downsample.0", in, out, 1, stride, size);
      size /= stride;
      in = out;
    }
  }
  return shapes;
}

// A layer with its tensors, the timed baton calls and (on CUDA) the same library calls made bare.
struct Workload {
  std::string name, detail;
  int count = 1;
  std::unique_ptr<Layer> layer;
  bool needs_input_grad = true;
  Shape input_shape;
  std::vector<Tensor> inputs, params, grads;
  Tensor dy;
  std::vector<Tensor> saved;
  std::string note;
};

Tensor random_tensor(Context& ctx, const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape, DType::f32, ctx);
  kernels::uniform(ctx, t, seed, 0, -1.0, 1.0);
  return t;
}

void prepare(Context& ctx, Workload& w) {
  w.inputs = {random_tensor(ctx, w.input_shape, 1)};
  const std::vector<Shape> shapes = {w.input_shape};
  uint64_t seed = 2;
  for (const TensorSpec& spec : w.layer->param_specs(shapes)) {
    w.params.push_back(random_tensor(ctx, spec.shape, seed++));
    Tensor g = Tensor::empty(spec.shape, DType::f32, ctx);
    kernels::fill(ctx, g, 0.0);
    w.grads.push_back(g);
  }
  w.dy = random_tensor(ctx, w.layer->infer_shapes(shapes)[0], seed);
}

ForwardResult run_forward(Context& ctx, const Workload& w) {
  return w.layer->forward({.ctx = ctx, .mode = Mode::train, .inputs = w.inputs, .params = w.params, .buffers = {}});
}

void run_backward(Context& ctx, const Workload& w) {
  w.layer->backward({.ctx = ctx,
                     .output_grads = std::span(&w.dy, 1),
                     .saved = w.saved,
                     .params = w.params,
                     .param_grads = w.grads,
                     .needs_input_grad = {w.needs_input_grad}});
}

// The library calls behind one forward and one backward, each as one function (empty on CPU).
struct DirectCalls {
  std::function<void()> forward, backward;
  std::vector<Tensor> buffers;  // outputs of the bare calls, kept alive
};

DirectCalls conv_direct_calls(Context& ctx, const Workload& w) {
  const auto& conv = dynamic_cast<const layers::Conv2d&>(*w.layer);
  const Tensor &x = w.inputs[0], &weight = w.params[0];
  DirectCalls d;
  const Tensor y = Tensor::empty(w.dy.shape(), DType::f32, ctx), dx = Tensor::empty(x.shape(), DType::f32, ctx);
  const Tensor dw = Tensor::empty(weight.shape(), DType::f32, ctx);
  d.buffers = {y, dx, dw};
  using kernels::Conv2dPass;
  d.forward = kernels::conv2d_library_call(ctx, Conv2dPass::forward, x, weight, y, conv.params());
  if (!d.forward) return d;
  auto filter = kernels::conv2d_library_call(ctx, Conv2dPass::backward_filter, x, dw, w.dy, conv.params());
  std::function<void()> data;
  if (w.needs_input_grad)
    data = kernels::conv2d_library_call(ctx, Conv2dPass::backward_data, dx, weight, w.dy, conv.params());
  d.backward = [data, filter] {
    if (data) data();
    filter();
  };
  return d;
}

DirectCalls linear_direct_calls(Context& ctx, const Workload& w) {
  const Tensor &x = w.inputs[0], &weight = w.params[0];
  DirectCalls d;
  const Tensor y = Tensor::empty(w.dy.shape(), DType::f32, ctx), dx = Tensor::empty(x.shape(), DType::f32, ctx);
  const Tensor dw = Tensor::empty(weight.shape(), DType::f32, ctx);
  d.buffers = {y, dx, dw};
  d.forward = kernels::matmul_library_call(ctx, x, weight, y, false, true);
  if (!d.forward) return d;
  auto data = kernels::matmul_library_call(ctx, w.dy, weight, dx, false, false);
  auto filter = kernels::matmul_library_call(ctx, w.dy, x, dw, true, false, 1.0, 1.0);
  d.backward = [data, filter] {
    data();
    filter();
  };
  return d;
}

std::vector<Workload> make_workloads(int64_t batch) {
  std::vector<Workload> out;
  for (const ConvShape& s : resnet50_convolutions()) {
    Workload w;
    w.name = s.name;
    w.detail = std::to_string(s.kernel) + "x" + std::to_string(s.kernel) + (s.stride > 1 ? "/2 " : " ") +
               std::to_string(s.in) + "->" + std::to_string(s.out) + " @" + std::to_string(s.size);
    w.count = s.count;
    w.layer = std::make_unique<layers::Conv2d>(layers::Conv2dOptions{.in_channels = s.in,
                                                                     .out_channels = s.out,
                                                                     .kernel_size = {s.kernel, s.kernel},
                                                                     .stride = {s.stride, s.stride},
                                                                     .padding = {s.kernel / 2, s.kernel / 2},
                                                                     .bias = false});
    w.input_shape = Shape{batch, s.in, s.size, s.size};
    w.needs_input_grad = s.name != "conv1";  // the image needs no gradient
    out.push_back(std::move(w));
  }
  Workload fc;
  fc.name = "fc";
  fc.detail = "Linear 2048->1000";
  fc.layer = std::make_unique<layers::Linear>(layers::LinearOptions{.in_features = 2048, .out_features = 1000});
  fc.input_shape = Shape{batch, 2048};
  fc.note = kLinearNote;
  out.push_back(std::move(fc));
  return out;
}

std::string format_ms(std::optional<double> ms) {
  if (!ms) return "n/a";
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f", *ms);
  return text;
}

std::string format_overhead(double ms, std::optional<double> direct) {
  if (!direct) return "n/a";
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", 100.0 * (ms - *direct) / *direct);
  return text;
}

nlohmann::json optional_json(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

void run_bench(const BenchOptions& options) {
  const Device device = choose_bench_device(options.device);
  const int64_t batch = options.batch > 0 ? options.batch : device.is_cuda() ? 32 : 2;
  Context ctx(device);
  ctx.set_allow_tf32(options.tf32);
  const BenchTimerConfig timing =
      device.is_cuda() ? BenchTimerConfig{.warmup = 5, .repeats = 20} : BenchTimerConfig{.warmup = 1, .repeats = 3};
  nlohmann::json report = bench_report(device, timing);
  report["batch"] = batch;
  report["dtype"] = "f32";
  report["allow_tf32"] = options.tf32;
  report["skipped"] = nlohmann::json::array({kBatchNormSkipped});

  std::printf("%s, batch %lld, f32%s\n", device_display_name(device).c_str(), static_cast<long long>(batch),
              options.tf32 ? " (TF32 allowed)" : " (exact float32)");
  std::printf("%-22s %-22s %3s | %10s %8s %10s %8s | %10s %8s %10s %8s\n", "layer", "shape", "n", "fwd ms", "TFLOP/s",
              "direct ms", "overhead", "bwd ms", "TFLOP/s", "direct ms", "overhead");
  for (Workload& w : make_workloads(batch)) {
    prepare(ctx, w);
    const std::vector<Shape> shapes = {w.input_shape};
    const LayerCost cost = w.layer->cost(shapes, DType::f32);
    const double forward_flops = cost.forward_flops;
    // cost() counts the data gradient; a layer whose input needs none skips it.
    const double backward_flops = cost.backward_flops - (w.needs_input_grad ? 0.0 : 2 * cost.forward_macs);
    const double forward_ms = time_median_ms(ctx, timing, [&] { run_forward(ctx, w); });
    w.saved = run_forward(ctx, w).saved;
    const double backward_ms = time_median_ms(ctx, timing, [&] { run_backward(ctx, w); });

    const DirectCalls direct = w.name == "fc" ? linear_direct_calls(ctx, w) : conv_direct_calls(ctx, w);
    std::optional<double> direct_forward, direct_backward;
    if (direct.forward) {
      direct_forward = time_median_ms(ctx, timing, direct.forward);
      direct_backward = time_median_ms(ctx, timing, direct.backward);
    }
    const double forward_tflops = forward_flops / (forward_ms * 1e9);
    const double backward_tflops = backward_flops / (backward_ms * 1e9);
    std::printf("%-22s %-22s %3d | %10.4f %8.3f %10s %8s | %10.4f %8.3f %10s %8s\n", w.name.c_str(), w.detail.c_str(),
                w.count, forward_ms, forward_tflops, format_ms(direct_forward).c_str(),
                format_overhead(forward_ms, direct_forward).c_str(), backward_ms, backward_tflops,
                format_ms(direct_backward).c_str(), format_overhead(backward_ms, direct_backward).c_str());
    nlohmann::json row = {{"layer", w.name},
                          {"detail", w.detail},
                          {"type", w.layer->type()},
                          {"config", w.layer->config()},
                          {"input_shape", w.input_shape.dims()},
                          {"count_in_resnet50", w.count},
                          {"input_grad", w.needs_input_grad},
                          {"forward_flops", forward_flops},
                          {"backward_flops", backward_flops},
                          {"forward_ms", forward_ms},
                          {"forward_tflops", forward_tflops},
                          {"direct_forward_ms", optional_json(direct_forward)},
                          {"backward_ms", backward_ms},
                          {"backward_tflops", backward_tflops},
                          {"direct_backward_ms", optional_json(direct_backward)}};
    if (!w.note.empty()) row["note"] = w.note;
    if (const auto* conv = dynamic_cast<const layers::Conv2d*>(w.layer.get()); conv != nullptr) {
      using kernels::Conv2dPass;
      const Shape weight = w.params[0].shape();
      for (const auto& [pass, key] :
           {std::pair{Conv2dPass::forward, "forward"}, std::pair{Conv2dPass::backward_data, "backward_data"},
            std::pair{Conv2dPass::backward_filter, "backward_filter"}}) {
        const auto algo =
            kernels::cached_conv2d_algorithm(ctx, pass, w.input_shape, weight, conv->params(), DType::f32);
        if (algo) {
          row["cudnn_algorithms"][key] = {{"algo", algo->algo},
                                          {"math_type", algo->math_type},
                                          {"workspace_bytes", algo->workspace_bytes},
                                          {"deterministic", algo->deterministic}};
        }
      }
    }
    report["results"].push_back(row);
  }
  std::printf("fc: %s\nskipped: %s\n", kLinearNote, kBatchNormSkipped);
  if (!device.is_cuda()) std::printf("direct library calls: n/a on %s\n", device.str().c_str());
  if (!options.json_path.empty()) {
    write_file_atomically(options.json_path, report.dump(2) + "\n");
    std::printf("wrote %s\n", options.json_path.c_str());
  }
}

}  // namespace

void add_bench_layers_command(CLI::App& bench) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "layers",
      "ResNet-50's convolutions and classifier: forward/backward medians, TFLOP/s, overhead over cuDNN/cuBLAS");
  cmd->add_option("--device", options->device, "cpu, cpu:N or cuda:N (default: cuda:0 if present, else cpu)");
  cmd->add_option("--batch", options->batch, "Batch size (default: 32 on a GPU, 2 on the CPU)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--json", options->json_path, "Also write the results as JSON to this file (atomically)");
  cmd->add_flag("--tf32", options->tf32, "Allow TF32 tensor cores for the f32 convolutions and GEMMs");
  cmd->callback([options] { run_bench(*options); });
}

}  // namespace baton::cli
