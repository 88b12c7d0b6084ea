// Running the `baton` binary from a test: a fresh directory per test, and `baton <args>` with its
// exit code, stdout and stderr; checks of one-line errors and of positive figures in JSON reports;
// the losses of a metrics file.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/scratch_dir.h"

extern char** environ;

namespace baton::cli {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// `j[field]` is a number greater than 0 (benchmark reports: times, rates, counts).
inline void expect_positive(const nlohmann::json& j, const char* field) {
  ASSERT_TRUE(j.contains(field)) << field << " missing in " << j.dump();
  ASSERT_TRUE(j[field].is_number()) << field << " is not a number: " << j[field].dump();
  EXPECT_GT(j[field].get<double>(), 0) << field;
}

inline std::string read_file_text(const std::filesystem::path& path);

// The losses a metrics file logged, in order.
inline std::vector<double> logged_losses(const std::filesystem::path& metrics) {
  std::vector<double> out;
  std::istringstream lines(read_file_text(metrics));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("loss")) out.push_back(j["loss"].get<double>());
  }
  return out;
}

inline std::string read_file_text(const std::filesystem::path& path) {
  return baton::testing::read_file(path.string());
}

// The losses a metrics file logged, in order (the name the older tests use).
inline std::vector<double> losses(const std::filesystem::path& metrics) { return logged_losses(metrics); }

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

  // `baton <args> --json DIR/<name>` (a benchmark's report): asserts that it succeeded and wrote the
  // file, and gives its output and the JSON read. Call it in ASSERT_NO_FATAL_FAILURE.
  void run_bench(const std::string& args, const std::string& name, CliResult& run, nlohmann::json& report) {
    const std::filesystem::path path = dir_ / name;
    run = run_baton(args + " --json " + path.string());
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    ASSERT_TRUE(std::filesystem::exists(path));
    report = nlohmann::json::parse(read_file_text(path));
  }

  // `baton <args>` exits with code 1 and one line on stderr containing `text`.
  void expect_one_line_error(const std::string& args, const std::string& text, const std::string& environment = "") {
    const CliResult r = run_baton(args, environment);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(text), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }

  // Starts `baton <args>` in the background with stdout and stderr in DIR/<name>.out and .err.
  pid_t start_baton(const std::string& args, const std::string& name) {
    const std::string command = std::string("exec ") + BATON_CLI_PATH + " " + args + " > " +
                                (dir_ / (name + ".out")).string() + " 2> " + (dir_ / (name + ".err")).string();
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ), 0);
    return pid;
  }

  // Exit status, or -1 when the process does not end within `timeout` (it is then killed).
  static int wait_for(pid_t pid, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
  }

  baton::testing::ScratchDir scratch_{"cli"};
  const std::filesystem::path dir_ = scratch_.path();
};

}  // namespace baton::cli
