// `baton bench`: the benchmark subcommands (kernels, layers, pipelines, communicators, data parallelism,
// hybrids, and the research comparison predicted by the simulator).
#include "tools/commands.h"

namespace baton::cli {

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Microbenchmarks; results as a table and optionally JSON");
  bench->require_subcommand(1);
  add_bench_kernels_command(*bench);
  add_bench_layers_command(*bench);
  add_bench_pipeline_command(*bench);
  add_bench_comm_command(*bench);
  add_bench_dp_command(*bench);
  add_bench_hybrid_command(*bench);
  add_bench_research_command(*bench);
}

}  // namespace baton::cli
