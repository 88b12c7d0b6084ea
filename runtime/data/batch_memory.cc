// A batch's input bytes against the machine's memory.
#include "runtime/data/batch_memory.h"

#include "runtime/core/byte_size.h"
#include "runtime/core/error.h"

namespace baton::data {

void check_batch_fits_memory(const Dataset& dataset, int64_t batch_size) {
  double sample_bytes = 0;
  for (const SampleField& input : dataset.layout().inputs) {
    sample_bytes += static_cast<double>(input.shape.numel()) * static_cast<double>(dtype_size(input.dtype));
  }
  const double batch_bytes = sample_bytes * static_cast<double>(batch_size);
  const double memory = physical_memory_bytes();
  BATON_CHECK(memory == 0 || batch_bytes <= memory, "data '", dataset.name(), "': a batch of ", batch_size,
              " samples takes ", decimal_bytes(batch_bytes), " (", decimal_bytes(sample_bytes),
              " each) and this machine has ", decimal_bytes(memory),
              " of memory: give smaller samples or a smaller batch size");
}

}  // namespace baton::data
