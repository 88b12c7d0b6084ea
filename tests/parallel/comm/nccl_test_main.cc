// main of the NCCL communicator tests: on the emulated GPU, four devices unless BATON_EMU_DEVICES
// says otherwise (read at the first CUDA call); on GPUs the tests that need more devices skip.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("BATON_EMU_DEVICES", "4", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
