// `baton`: the command line. Every error — a bad flag or value as much as a baton::Error — becomes
// one line on stderr and exit code 1; a command stopped by a signal before it had anything to keep
// exits with 128 + the signal's number.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <regex>
#include <string>

#include "runtime/core/build_config.h"
#include "runtime/core/error.h"
#include "runtime/core/log.h"
#include "runtime/core/message_text.h"
#include "runtime/core/stop_request.h"
#include "tools/commands.h"

namespace {

// A message of several lines (CLI11's; a baton::Error with its context lines) on one: "line one;
// line two", with any long value it echoes shortened (baton::shorten_long_words).
std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at)) {
    size_t end = at + 1;
    while (end < text.size() && text[end] == ' ') ++end;  // an error's context lines are indented
    text.replace(at, end - at, "; ");
  }
  return baton::shorten_long_words(text);
}

// CLI11's wording for a flag given twice ("--steps: At Most 1 required but received 2") in plain words.
std::string plain_parse_message(const std::string& text) {
  static const std::regex given_twice(R"(^(\S+): At Most 1 required but received (\d+)$)");
  return std::regex_replace(text, given_twice, "$1 is given $2 times; give it once");
}

// " train" for the subcommand that was being parsed, "" before one was named.
std::string command_of(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return " " + sub->get_name();
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // Tensors freed by a training step stay in the heap for the next one instead of going back to the
  // kernel and being faulted in again (a few percent of a ResNet-50 CPU step; docs/cpu.md): blocks
  // up to glibc's largest mmap threshold come from the heap, and the heap is not trimmed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  // A write past the file-size limit (ulimit -f) fails with EFBIG, which the writers report naming
  // the file ("File too large"), instead of SIGXFSZ ending the process mid-save without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  // BATON_LOG is read now, so that a value it does not know is reported in every run, not only in a
  // run that happens to log something.
  (void)baton::log_level();
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
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "baton: error: %s (baton%s --help lists the options)\n",
                 plain_parse_message(one_line(e.what())).c_str(), command_of(app).c_str());
    return 1;
  } catch (const baton::Interrupted& e) {
    std::fprintf(stderr, "baton%s: %s: nothing was trained or saved\n", command_of(app).c_str(), e.message().c_str());
    return 128 + e.signal();
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "baton: error: %s\n", one_line(e.what()).c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    // The last resort: sizes a command can foresee are refused before they are allocated.
    std::fprintf(stderr,
                 "baton%s: error: out of memory (std::bad_alloc): the values given ask for more memory "
                 "than this machine has\n",
                 command_of(app).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton: unexpected error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
