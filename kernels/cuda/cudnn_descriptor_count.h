// How many cuDNN descriptors baton has created in this process (kernels/cuda/cudnn_descriptors.cc).
// Plain C++, for tests that check a repeated call of a known problem creates none.
#pragma once

#include <cstdint>

namespace baton::kernels::cuda {

int64_t cudnn_descriptors_created();

}  // namespace baton::kernels::cuda
