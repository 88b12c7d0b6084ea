// write_file_atomically and AtomicFileWriter: replace content whole, and leave the target untouched
// on failure or when not committed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/core/atomic_file.h"
#include "runtime/core/error.h"

namespace baton {
namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AtomicFile, WritesAndReplacesWithoutLeavingTemporaries) {
  const auto dir = std::filesystem::temp_directory_path() / ("baton_atomic_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.json";
  write_file_atomically(file.string(), "first");
  EXPECT_EQ(read_all(file), "first");
  write_file_atomically(file.string(), "second, longer");
  EXPECT_EQ(read_all(file), "second, longer");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, FailureNamesThePath) {
  try {
    write_file_atomically("/nonexistent-dir-for-baton/x.json", "data");
    FAIL() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-for-baton/x.json"), std::string::npos);
  }
}

TEST(AtomicFile, WriterStreamsPartsAndDiscardsWithoutCommit) {
  const auto dir = std::filesystem::temp_directory_path() / ("baton_atomic_writer_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.bin";
  write_file_atomically(file.string(), "old content");
  {
    AtomicFileWriter writer(file.string());
    writer.write("new ", 4);
    // Destroyed without commit(): the target keeps its content and no temporary file remains.
  }
  EXPECT_EQ(read_all(file), "old content");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  {
    AtomicFileWriter writer(file.string());
    writer.write("new ", 4);
    writer.write("content", 7);
    EXPECT_EQ(read_all(file), "old content");  // nothing visible before the commit
    writer.commit();
  }
  EXPECT_EQ(read_all(file), "new content");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
