// libFuzzer target: a safetensors file (a checkpoint's or a weights file): the header checks, every
// tensor read to the host, the finiteness scan and the checkpoint metadata.
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/stream.h"
#include "runtime/train/checkpoint_metadata.h"
#include "runtime/train/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = baton::fuzz::as_file(data, size, "model.safetensors") + "/model.safetensors";
  try {
    const baton::SafetensorsFile file(path);
    const baton::Stream host = baton::Stream::create(baton::Device::cpu());
    for (const std::string& name : file.names()) {
      file.check_data(name);
      (void)file.read(name, host);
    }
    (void)baton::read_checkpoint_state(file);
  } catch (const baton::Error&) {
  }
  return 0;
}
