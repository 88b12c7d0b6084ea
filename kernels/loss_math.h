// The per-row loss formula shared by the CPU reference and the CUDA kernels.
#pragma once

#include "runtime/core/host_device.h"

namespace baton::kernels {

// -sum_c q_c log p_c for one row, with q = keep * onehot(label) + spread (keep = 1 - eps,
// spread = eps / C), from z = x - max(x): log p_c = z_c - log_sum_exp, and since sum_c q_c = 1,
//   loss = log_sum_exp - keep * z_label - spread * sum_c z_c.
// A term whose weight is zero is left out, so a class masked with a -inf logit keeps the loss
// finite unless the target puts mass on it (as in PyTorch).
template <typename A>
BATON_HOST_DEVICE A smoothed_cross_entropy(A log_sum_exp, A z_label, A sum_z, A keep, A spread) {
  A loss = log_sum_exp;
  if (keep != A(0)) loss -= keep * z_label;
  if (spread != A(0)) loss -= spread * sum_z;
  return loss;
}

}  // namespace baton::kernels
