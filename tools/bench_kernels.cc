// `baton bench kernels`: memory-bound ops at a large and a small size. For each: the median time
// after warm-up (events on CUDA, host clock on CPU), achieved GB/s (bytes each op must read plus
// write, counted once), and that as a percentage of a plain device copy of the same size measured
// in the same run (cudaMemcpyAsync device-to-device on CUDA, memcpy on CPU).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/optimizer.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "runtime/core/log.h"
#include "tools/bench_timer.h"
#include "tools/commands.h"

namespace baton::cli {
namespace {

struct KernelBenchOptions {
  std::string device;  // empty: cuda:0 when a GPU is present, else cpu
  std::string json_path;
  bool quick = false;
};

struct BenchOp {
  std::string name;
  double bytes_per_element;  // read + write, in units of the f32 element size per element
  std::function<void()> run;
};

struct OpResult {
  std::string op;
  int64_t elements = 0;
  double bytes_moved = 0;
  double median_ms = 0;
  double gbps = 0;
  double percent_of_copy = 0;
};

// The ops of the table over tensors of `n` f32 elements (filled with non-zero data). ReLU reads
// `signs`, normal random numbers: activations' signs look random, and a kernel that branches on them
// must pay for it here as it does in training (a constant input makes every branch predictable).
struct KernelWorkload {
  KernelWorkload(Context& ctx, int64_t n)
      : a(Tensor::empty(Shape{n}, DType::f32, ctx)),
        b(Tensor::empty(Shape{n}, DType::f32, ctx)),
        c(Tensor::empty(Shape{n}, DType::f32, ctx)),
        d(Tensor::empty(Shape{n}, DType::f32, ctx)),
        signs(Tensor::empty(Shape{n}, DType::f32, ctx)),
        half(Tensor::empty(Shape{n}, DType::bf16, ctx)),
        scalar(Tensor::empty(Shape{}, DType::f32, ctx)) {
    a.fill(0.5, ctx.stream());
    b.fill(-0.25, ctx.stream());
    c.fill(0.125, ctx.stream());
    d.fill(0.0625, ctx.stream());
    kernels::normal(ctx, signs, 1, 0);
  }
  Tensor a, b, c, d, signs, half, scalar;
};

std::vector<BenchOp> make_ops(Context& ctx, KernelWorkload& w) {
  using namespace kernels;
  const kernels::SgdParams sgd{.lr = 1e-3, .momentum = 0.9};
  const kernels::SgdParams nesterov{.lr = 1e-3, .momentum = 0.9, .nesterov = true, .weight_decay = 1e-4};
  int64_t adam_step = 0;
  return {
      {"fill", 1, [&] { fill(ctx, w.c, 1.5); }},
      {"copy (kernels::copy)", 2, [&] { copy(ctx, w.a, w.c); }},
      {"add", 3, [&] { add(ctx, w.a, w.b, w.c); }},
      {"mul", 3, [&] { mul(ctx, w.a, w.b, w.c); }},
      {"scale", 2, [&] { scale(ctx, w.a, 0.5, w.c); }},
      {"axpy", 3, [&] { axpy(ctx, 1e-3, w.a, w.c); }},
      {"axpby", 3, [&] { axpby(ctx, 0.5, w.a, 0.25, w.b, w.c); }},
      {"relu_forward", 2, [&] { relu_forward(ctx, w.signs, w.c); }},
      {"relu_backward", 3, [&] { relu_backward(ctx, w.signs, w.b, w.c); }},
      {"cast f32->bf16", 1.5, [&] { cast(ctx, w.a, w.half); }},
      {"sum", 1, [&] { sum(ctx, w.a, w.scalar); }},
      {"sum_squares", 1, [&] { sum_squares(ctx, w.a, w.scalar); }},
      {"sgd momentum", 5, [&, sgd] { sgd_step(ctx, w.c, w.a, w.d, sgd); }},
      {"sgd nesterov+wd", 5, [&, nesterov] { sgd_step(ctx, w.c, w.a, w.d, nesterov); }},
      {"adamw", 7,
       [&, adam_step]() mutable { adamw_step(ctx, w.c, w.a, w.b, w.d, {.lr = 1e-3, .step = ++adam_step}); }},
  };
}

void run_kernel_bench(const KernelBenchOptions& options) {
  const Device device = choose_bench_device(options.device);
  Context ctx(device);
  const int64_t large_bytes = options.quick ? (int64_t{16} << 20) : (int64_t{256} << 20);
  const int64_t small_bytes = int64_t{256} << 10;
  const BenchTimerConfig timing =
      options.quick ? BenchTimerConfig{.warmup = 2, .repeats = 5} : BenchTimerConfig{.warmup = 5, .repeats = 20};
  nlohmann::json report = bench_report(device, timing);

  std::printf("%-22s %10s %12s %10s %10s\n", "op", "size", "median ms", "GB/s", "% of copy");
  for (const int64_t tensor_bytes : {large_bytes, small_bytes}) {
    const int64_t n = tensor_bytes / 4;
    KernelWorkload w(ctx, n);
    // The ceiling: a plain copy of one tensor (read n + write n elements).
    Tensor copy_src = w.a, copy_dst = w.c;
    const double copy_ms = time_median_ms(ctx, timing, [&] { copy_dst.copy_from(copy_src, ctx.stream()); });
    const double copy_gbps = 2.0 * static_cast<double>(tensor_bytes) / (copy_ms * 1e6);
    std::printf("%-22s %10s %12.4f %10.1f %10s\n", device.is_cuda() ? "copy (cudaMemcpy D2D)" : "copy (memcpy)",
                human_bytes(static_cast<double>(tensor_bytes)).c_str(), copy_ms, copy_gbps, "100.0");
    if (tensor_bytes == large_bytes) report["copy_gbps"] = copy_gbps;
    report["copies"].push_back({{"bytes_per_tensor", tensor_bytes}, {"median_ms", copy_ms}, {"gbps", copy_gbps}});
    for (BenchOp& op : make_ops(ctx, w)) {
      OpResult r;
      r.op = op.name;
      r.elements = n;
      r.bytes_moved = op.bytes_per_element * static_cast<double>(tensor_bytes);
      r.median_ms = time_median_ms(ctx, timing, op.run);
      r.gbps = r.bytes_moved / (r.median_ms * 1e6);
      r.percent_of_copy = 100.0 * r.gbps / copy_gbps;
      std::printf("%-22s %10s %12.4f %10.1f %10.1f\n", r.op.c_str(),
                  human_bytes(static_cast<double>(tensor_bytes)).c_str(), r.median_ms, r.gbps, r.percent_of_copy);
      report["results"].push_back({{"op", r.op},
                                   {"dtype", "f32"},
                                   {"bytes_per_tensor", tensor_bytes},
                                   {"bytes", r.bytes_moved},
                                   {"median_ms", r.median_ms},
                                   {"gbps", r.gbps},
                                   {"copy_gbps", copy_gbps},
                                   {"percent_of_copy", r.percent_of_copy}});
    }
  }
  write_bench_json(options.json_path, report);
}

}  // namespace

void add_bench_kernels_command(CLI::App& bench) {
  auto options = std::make_shared<KernelBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("kernels", "Memory-bound kernels: median time, GB/s, % of copy bandwidth");
  cmd->add_option("--device", options->device, "cpu, cpu:N or cuda:N (default: cuda:0 if present, else cpu)");
  cmd->add_option("--json", options->json_path, "Also write the results as JSON to this file (atomically)");
  cmd->add_flag("--quick", options->quick, "16 MiB instead of 256 MiB tensors and fewer repeats (a smoke run)");
  cmd->callback([options] { run_kernel_bench(*options); });
}

}  // namespace baton::cli
