// Running the `baton` binary from a test: a fresh directory per test, and `baton <args>` with its
// exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/scratch_dir.h"

namespace baton::cli {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_file_text(const std::filesystem::path& path) {
  return baton::testing::read_file(path.string());
}

// dir_: an empty directory named after the test, removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  // Runs `baton <args>` (arguments are not quoted: keep them free of shell characters).
  // `environment`: "NAME=value ..." assignments for that run alone.
  CliResult run_baton(const std::string& args, const std::string& environment = "") {
    const std::filesystem::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string command =
        environment + " " + std::string(BATON_CLI_PATH) + " " + args + " > " + out.string() + " 2> " + err.string();
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file_text(out), read_file_text(err)};
  }

  baton::testing::ScratchDir scratch_{"cli"};
  const std::filesystem::path dir_ = scratch_.path();
};

}  // namespace baton::cli
