// `baton bench layers`: the distinct convolutions of ResNet-50 at 224×224 (taken from the graph models/
// builds), its Linear(2048 -> 1000) classifier and its distinct BatchNorm2d shapes (training mode), through the Layer
// interface (forward allocates its output; backward computes the input gradient where a network needs it and
// accumulates the parameter gradients). For each: the median forward and backward times, the
// achieved rate (TFLOP/s for convolutions and the classifier; GB/s for BatchNorm, which is bound by
// memory: the bytes each pass must move), and beside them the same cuDNN / cuBLAS calls made
// directly (descriptors, workspace and algorithm fixed beforehand), so the overhead column is what
// baton adds over the library. On a CPU device the direct column is "n/a".
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "layers/conv.h"
#include "tools/bench_ceilings.h"
#include "tools/bench_layers_workload.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

struct LayerBenchOptions {
  std::string device;  // empty: cuda:0 when a GPU is present, else cpu
  int64_t batch = 0;   // 0: 32 on a GPU, 2 on the CPU
  std::string json_path;
  bool tf32 = false;
  bool channels_last = true;  // CPU: activations as baton train keeps them (Context::set_channels_last)
};

ForwardResult run_forward(Context& ctx, const Workload& w) {
  return w.layer->forward(
      {.ctx = ctx, .mode = Mode::train, .inputs = w.inputs, .params = w.params, .buffers = w.buffers});
}

void run_backward(Context& ctx, const Workload& w) {
  w.layer->backward({.ctx = ctx,
                     .output_grads = std::span(&w.dy, 1),
                     .saved = w.saved,
                     .params = w.params,
                     .param_grads = w.grads,
                     .needs_input_grad = {w.needs_input_grad}});
}

// What a row's rate counts, per pass: floating-point operations (TFLOP/s) for the convolutions and
// the classifier, bytes each pass must move (GB/s) for BatchNorm, which is bound by memory.
struct Work {
  const char* unit;      // column header: "TFLOP/s" or "GB/s"
  const char* key;       // JSON: forward_<key>, backward_<key> ("flops" or "bytes")
  const char* rate_key;  // JSON: forward_<rate_key>, backward_<rate_key> ("tflops" or "gbps")
  double per_ms;         // amount per ms that is 1 of the unit: 1e9 FLOP/ms = 1 TFLOP/s, 1e6 B/ms = 1 GB/s
  double forward = 0, backward = 0;

  double rate(double amount, double ms) const { return amount / (ms * per_ms); }
};

Work work_of(const Workload& w) {
  const std::vector<Shape> shapes = {w.input_shape};
  if (w.kind == WorkloadKind::batch_norm) {
    // f32, each byte counted once. Forward: reads x, writes y; per channel reads γ and β, reads and
    // writes the running mean and variance, writes the saved mean and invstd. Backward: reads x
    // and dy, writes dx; per channel reads γ and the saved statistics, accumulates into dγ and dβ.
    const auto elements = static_cast<double>(w.input_shape.numel());
    const auto channels = static_cast<double>(w.input_shape[1]);
    return {"GB/s", "bytes", "gbps", 1e6, 4 * (2 * elements + 8 * channels), 4 * (3 * elements + 7 * channels)};
  }
  const LayerCost cost = w.layer->cost(shapes, DType::f32);
  // cost() counts the data gradient; a layer whose input needs none skips it.
  const double backward = cost.backward_flops - (w.needs_input_grad ? 0.0 : 2 * cost.forward_macs);
  return {"TFLOP/s", "flops", "tflops", 1e9, cost.forward_flops, backward};
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

void print_header(const char* unit) {
  std::printf("%-22s %-22s %3s | %10s %8s %10s %8s | %10s %8s %10s %8s | %6s %6s\n", "layer", "shape", "n", "fwd ms",
              unit, "direct ms", "overhead", "bwd ms", unit, "direct ms", "overhead", "fwd %", "bwd %");
}

void run_layer_bench(const LayerBenchOptions& options) {
  const Device device = choose_bench_device(options.device);
  const int64_t batch = options.batch > 0 ? options.batch : device.is_cuda() ? 32 : 2;
  Context ctx(device);
  ctx.set_allow_tf32(options.tf32);
  ctx.set_channels_last(options.channels_last && device.is_cpu());
  const BenchTimerConfig timing =
      device.is_cuda() ? BenchTimerConfig{.warmup = 5, .repeats = 20} : BenchTimerConfig{.warmup = 1, .repeats = 3};
  nlohmann::json report = bench_report(device, timing);
  report["batch"] = batch;
  report["dtype"] = "f32";
  report["allow_tf32"] = options.tf32;
  report["channels_last"] = ctx.channels_last();

  std::printf("%s, batch %lld, f32%s%s\n", device_display_name(device).c_str(), static_cast<long long>(batch),
              options.tf32 ? " (TF32 allowed)" : " (exact float32)",
              ctx.channels_last() ? ", channels-last activations" : "");
  // The columns "fwd %" and "bwd %": each rate as a percentage of these, measured now.
  const Ceiling sgemm = measure_sgemm(ctx, timing), copy = measure_copy(ctx, timing);
  std::printf("ceilings: %s %.1f GFLOP/s; %s %.1f GB/s\n", sgemm.what.c_str(), sgemm.rate, copy.what.c_str(),
              copy.rate);
  report["ceilings"] = {{"sgemm", {{"what", sgemm.what}, {"median_ms", sgemm.median_ms}, {"gflops", sgemm.rate}}},
                        {"copy", {{"what", copy.what}, {"median_ms", copy.median_ms}, {"gbps", copy.rate}}}};
  std::string unit;  // of the rows printed last: a new header when it changes
  for (Workload& w : make_workloads(batch)) {
    prepare_workload(ctx, w);
    const Work work = work_of(w);
    if (unit != work.unit) {
      if (!unit.empty()) std::printf("\n");
      print_header(work.unit);
      unit = work.unit;
    }
    const double forward_ms = time_median_ms(ctx, timing, [&] { run_forward(ctx, w); });
    w.saved = run_forward(ctx, w).saved;
    const double backward_ms = time_median_ms(ctx, timing, [&] { run_backward(ctx, w); });

    const DirectCalls direct = direct_calls(ctx, w);
    std::optional<double> direct_forward, direct_backward;
    if (direct.forward) {
      direct_forward = time_median_ms(ctx, timing, direct.forward);
      direct_backward = time_median_ms(ctx, timing, direct.backward);
    }
    const double forward_rate = work.rate(work.forward, forward_ms);
    const double backward_rate = work.rate(work.backward, backward_ms);
    const int precision = w.kind == WorkloadKind::batch_norm ? 1 : 3;
    // TFLOP/s against SGEMM's GFLOP/s, GB/s against the copy's.
    const double ceiling = work.per_ms == 1e9 ? sgemm.rate / 1000.0 : copy.rate;
    const double forward_percent = 100.0 * forward_rate / ceiling, backward_percent = 100.0 * backward_rate / ceiling;
    std::printf("%-22s %-22s %3d | %10.4f %8.*f %10s %8s | %10.4f %8.*f %10s %8s | %6.1f %6.1f\n", w.name.c_str(),
                w.detail.c_str(), w.count, forward_ms, precision, forward_rate, format_ms(direct_forward).c_str(),
                format_overhead(forward_ms, direct_forward).c_str(), backward_ms, precision, backward_rate,
                format_ms(direct_backward).c_str(), format_overhead(backward_ms, direct_backward).c_str(),
                forward_percent, backward_percent);
    const std::string amount = work.key, rate = work.rate_key;
    nlohmann::json row = {{"layer", w.name},
                          {"detail", w.detail},
                          {"type", w.layer->type()},
                          {"config", w.layer->config()},
                          {"input_shape", w.input_shape.dims()},
                          {"count_in_resnet50", w.count},
                          {"input_grad", w.needs_input_grad},
                          {"forward_" + amount, work.forward},
                          {"backward_" + amount, work.backward},
                          {"forward_ms", forward_ms},
                          {"forward_" + rate, forward_rate},
                          {"direct_forward_ms", optional_json(direct_forward)},
                          {"backward_ms", backward_ms},
                          {"backward_" + rate, backward_rate},
                          {"direct_backward_ms", optional_json(direct_backward)},
                          {"forward_percent_of_ceiling", forward_percent},
                          {"backward_percent_of_ceiling", backward_percent}};
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
  std::printf(
      "fc: %s\nBatchNorm2d: training mode; GB/s counts the bytes each pass must move (x, y / dy, dx once)\n"
      "fwd %% / bwd %%: the rate as a percentage of the SGEMM ceiling (TFLOP/s rows) or the copy (GB/s rows)\n",
      kLinearNote);
  if (!device.is_cuda()) std::printf("direct library calls: n/a on %s\n", device.str().c_str());
  write_bench_json(options.json_path, report);
}

}  // namespace

void add_bench_layers_command(CLI::App& bench) {
  auto options = std::make_shared<LayerBenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "layers",
      "ResNet-50's convolutions, classifier and BatchNorms: forward/backward medians, TFLOP/s or GB/s, overhead over "
      "cuDNN/cuBLAS");
  cmd->add_option("--device", options->device, "cpu, cpu:N or cuda:N (default: cuda:0 if present, else cpu)");
  cmd->add_option("--batch", options->batch, "Batch size (default: 32 on a GPU, 2 on the CPU)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--json", options->json_path, "Also write the results as JSON to this file (atomically)");
  cmd->add_flag("--tf32", options->tf32, "Allow TF32 tensor cores for the f32 convolutions and GEMMs");
  cmd->add_flag("--channels-last,!--no-channels-last", options->channels_last,
                "CPU: channels-last activations, as baton train keeps them (the default; docs/cpu.md)");
  cmd->callback([options] { run_layer_bench(*options); });
}

}  // namespace baton::cli
