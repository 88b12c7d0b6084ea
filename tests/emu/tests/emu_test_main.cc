// main of the emulator's tests: death tests re-execute the test binary ("threadsafe" style), so
// each child reads the emulator's settings (environment variables) afresh, with no state of the parent.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
