// The memory a batch of a dataset's inputs takes, checked against the machine's before anything of
// that size is allocated or read (a sample of synthetic:3x65536x65536 is 51.5 GB as f32).
#pragma once

#include <cstdint>

#include "runtime/data/dataset.h"

namespace baton::data {

// Throws baton::Error naming the data, the batch, the estimate and the memory when `batch_size`
// samples' inputs take more than the machine's physical memory.
void check_batch_fits_memory(const Dataset& dataset, int64_t batch_size);

}  // namespace baton::data
