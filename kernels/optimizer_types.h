// The hyper-parameters of the optimizer ops (kernels/optimizer.h), shared by the front end, the
// per-element formulas (kernels/optimizer_math.h) and the CUDA launchers.
#pragma once

#include <cstdint>

namespace baton::kernels {

// torch.optim.SGD (plus an optional decoupled weight decay). Per element, with g the gradient:
//   weight decay:  decoupled: param *= 1 - lr * weight_decay;  otherwise (L2): g += weight_decay * param
//   momentum > 0:  buf = g on the first step, else buf = momentum * buf + (1 - dampening) * g;
//                  g = g + momentum * buf with nesterov, else g = buf
//   param -= lr * g
struct SgdParams {
  double lr;
  double momentum = 0;
  double dampening = 0;
  bool nesterov = false;
  double weight_decay = 0;
  bool decoupled_weight_decay = false;
  bool first_step = false;  // initialise the momentum buffer from the gradient (its contents are ignored)
};

// torch.optim.AdamW. Per element, with step counting from 1:
//   param *= 1 - lr * weight_decay
//   exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
//   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
//   param -= lr / (1 - beta1^step) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^step) + eps)
// exp_avg and exp_avg_sq start as zeros (the caller's job) and are updated in place.
struct AdamWParams {
  double lr;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  int64_t step;  // 1 for the first update
};

}  // namespace baton::kernels
