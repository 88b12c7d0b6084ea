// The subcommands of the `baton` command line; each registers itself on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace baton::cli {

void add_devices_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_kernels_command(CLI::App& bench);
void add_bench_layers_command(CLI::App& bench);
void add_bench_pipeline_command(CLI::App& bench);
// Communicators and data parallelism (tools/bench_comm.cc, tools/bench_dp.cc).
void add_bench_comm_command(CLI::App& bench);
void add_bench_dp_command(CLI::App& bench);
void add_bench_hybrid_command(CLI::App& bench);
// The research comparison predicted by the simulator (tools/bench_research.cc).
void add_bench_research_command(CLI::App& bench);
void add_make_dataset_command(CLI::App& app);

// Reference models: list them, export a graph spec, per-node sizes and costs (tools/model_commands.cc,
// tools/info_command.cc).
void add_models_command(CLI::App& app);
void add_export_spec_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_train_command(CLI::App& app);

// The planner: profile a model, plan its split over a cluster (tools/profile_command.cc, plan_command.cc).
void add_profile_command(CLI::App& app);
void add_plan_command(CLI::App& app);

}  // namespace baton::cli
