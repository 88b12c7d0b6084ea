// `baton`: the command line. Every baton::Error becomes one clear line on stderr and exit code 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"baton: a C++20/CUDA deep-learning training runtime"};
  app.set_version_flag("--version", "baton " BATON_VERSION_STRING);
  app.require_subcommand(1);
  baton::cli::add_devices_command(app);
  baton::cli::add_bench_command(app);
  baton::cli::add_make_dataset_command(app);
  baton::cli::add_models_command(app);
  baton::cli::add_export_spec_command(app);
  baton::cli::add_info_command(app);
  baton::cli::add_train_command(app);
  baton::cli::add_profile_command(app);
  baton::cli::add_plan_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "baton: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton: unexpected error: %s\n", e.what());
    return 1;
  }
  return 0;
}
