// `baton profile`: per-node forward/backward times of a model at several micro-batch sizes,
// measured on a device or derived from a device description, saved as a JSON profile for `baton plan`.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "parallel/plan/analytic_profile.h"
#include "parallel/plan/profiler.h"
#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"
#include "tools/commands.h"
#include "tools/device_flag.h"
#include "tools/flag_checks.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

struct ProfileFlags {
  ModelFlags model;
  std::string spec_path;
  std::string device;
  std::string device_spec;
  std::string batch_sizes;
  std::string optimizer = "sgd";
  int warmup = 2;
  int repeats = 5;
  bool channels_last = true;  // as baton train's default
  std::string out;
};

// "8,16,32": positive integers; otherwise B, B/2, B/4, B/8 (down to 1) from --batch (default 32).
std::vector<int> profile_batch_sizes(const ProfileFlags& f) {
  std::vector<int> sizes;
  if (!f.batch_sizes.empty()) {
    size_t start = 0;
    while (start <= f.batch_sizes.size()) {
      const size_t comma = std::min(f.batch_sizes.find(',', start), f.batch_sizes.size());
      sizes.push_back(static_cast<int>(parse_positive("--batch-sizes", f.batch_sizes.substr(start, comma - start))));
      start = comma + 1;
    }
    return sizes;
  }
  const int batch = f.model.batch.empty() ? 32 : static_cast<int>(parse_positive("--batch", f.model.batch));
  for (int b = batch; b >= 1 && sizes.size() < 4; b /= 2) sizes.insert(sizes.begin(), b);
  return sizes;
}

void run_profile(const ProfileFlags& f) {
  BATON_CHECK(!f.out.empty(), "--out FILE is required");
  check_file_writable(f.out, "profile");  // before minutes of measuring
  BATON_CHECK(f.device.empty() || f.device_spec.empty(),
              "give --device (measure) or --device-spec (analytic), not both");
  std::string title;
  const Graph graph = load_model_graph(f.model, f.spec_path, true, &title);
  const std::string model = f.model.model.empty() ? f.spec_path : f.model.model;
  const std::vector<int> sizes = profile_batch_sizes(f);
  parallel::Profile profile;
  if (!f.device_spec.empty()) {
    parallel::AnalyticOptions o;
    o.batch_sizes = sizes;
    o.optimizer = f.optimizer;
    profile = parallel::analytic_profile(graph, model, parallel::load_device_spec(f.device_spec), o);
  } else {
    const Device device = pick_device(f.device.empty() ? "auto" : f.device);
    parallel::ProfilerOptions o;
    o.batch_sizes = sizes;
    o.optimizer = f.optimizer;
    o.warmup = f.warmup;
    o.repeats = f.repeats;
    o.channels_last = f.channels_last;
    std::fprintf(stderr, "profiling %s on %s at batch sizes", title.c_str(), device.str().c_str());
    for (int b : sizes) std::fprintf(stderr, " %d", b);
    std::fprintf(stderr, " (%d warm-up, median of %d)\n", f.warmup, f.repeats);
    profile = parallel::measure_profile(graph, model, device, o);
  }
  parallel::save_profile(profile, f.out);
  double fwd = 0, bwd = 0;
  for (int n = 0; n < profile.num_nodes(); ++n) {
    fwd += profile.nodes[n].fwd_ms.back();
    bwd += profile.nodes[n].bwd_ms.back();
  }
  std::printf("%s profile of %s on %s: %d nodes; at batch %d forward %.3f ms, backward %.3f ms; wrote %s\n",
              profile.source.c_str(), model.c_str(), profile.device.c_str(), profile.num_nodes(),
              profile.batch_sizes.back(), fwd, bwd, f.out.c_str());
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto f = std::make_shared<ProfileFlags>();
  CLI::App* cmd =
      app.add_subcommand("profile", "Profile a model's nodes (measured or analytic) into a JSON file for `baton plan`");
  CLI::Option* model = cmd->add_option("--model", f->model.model, "Model name (see `baton models`)");
  CLI::Option* spec = cmd->add_option("--model-spec", f->spec_path, "Graph spec file (JSON, see export-spec)");
  model->excludes(spec);
  add_model_size_flags(*cmd, f->model);
  cmd->add_option("--device", f->device, "Measure on this device: auto, cpu, cuda:N (default auto)");
  cmd->add_option("--device-spec", f->device_spec,
                  "Analytic profile from a device description instead: h200, h100-sxm, h100-pcie, a100-sxm, a100-pcie, "
                  "v100-sxm, v100-pcie, cpu, or a JSON file");
  cmd->add_option("--batch-sizes", f->batch_sizes,
                  "Micro-batch sizes to profile, e.g. 8,16,32 (default: --batch, /2, /4, /8)");
  cmd->add_option("--optimizer", f->optimizer, "sgd or adamw (optimiser state and step time)");
  cmd->add_option("--warmup", f->warmup, "Warm-up runs per batch size")->check(non_negative());
  cmd->add_option("--repeats", f->repeats, "Timed runs per batch size (the median is kept)")->check(positive());
  cmd->add_flag("--channels-last,!--no-channels-last", f->channels_last,
                "CPU float32: time the channels-last engine, baton train's default (docs/cpu.md)");
  cmd->add_option("--out", f->out, "Profile JSON to write (atomically)")->required();
  cmd->callback([f] { run_profile(*f); });
}

}  // namespace baton::cli
