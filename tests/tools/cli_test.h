// Running the `baton` binary from a test: a fresh directory per test, and `baton <args>` with its
// exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace baton::cli {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// dir_: an empty directory named after the test, removed afterwards.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("baton_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `baton <args>` (arguments are not quoted: keep them free of shell characters).
  CliResult run_baton(const std::string& args) {
    const std::filesystem::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string command = std::string(BATON_CLI_PATH) + " " + args + " > " + out.string() + " 2> " + err.string();
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file_text(out), read_file_text(err)};
  }

  std::filesystem::path dir_;
};

}  // namespace baton::cli
