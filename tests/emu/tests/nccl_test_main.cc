// main of the emulated NCCL's tests: four emulated devices unless BATON_EMU_DEVICES says otherwise
// (read at the first CUDA call), death tests re-executing the binary as the other emulator tests do.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("BATON_EMU_DEVICES", "4", 0);
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
