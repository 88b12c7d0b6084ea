// Emulated GPU: the plain reference loops behind the emulated cuDNN batch-normalisation calls (NCHW,
// spatial or per-activation), written from cuDNN's documented formulas; double accumulation.
#pragma once

#include <cstdint>

namespace baton_emu {

// x, y, dy, dx: n x c x h x w. Parameters (scale, bias, means, variances): 1 x c x 1 x 1 in spatial
// mode (statistics over n, h, w) or 1 x c x h x w per activation (statistics over n). Parameters have
// the data's type (cuDNN's rule for float and double data).
struct BatchNormShape {
  int n = 1, c = 1, h = 1, w = 1;
  bool per_activation = false;

  int64_t elements() const { return int64_t{n} * c * h * w; }
  int64_t parameters() const { return per_activation ? int64_t{c} * h * w : c; }
  // How many elements each statistic is taken over (m in cuDNN's formulas).
  int64_t count() const { return per_activation ? n : int64_t{n} * h * w; }
  int64_t parameter_of(int64_t element) const {
    return per_activation ? element % (int64_t{c} * h * w) : (element / (int64_t{h} * w)) % c;
  }
};

// Training forward: mean and biased variance over each statistic's m elements;
// y = alpha * (scale * (x - mean) / sqrt(var + epsilon) + bias) + beta * y (y not read when beta == 0).
// When running_mean/running_var are given: running = factor * batch + (1 - factor) * running, the
// variance's batch value being the UNBIASED estimate var * m / (m - 1). When save_mean/save_inv_std
// are given they receive mean and 1 / sqrt(var + epsilon).
template <typename T>
void batch_norm_forward_training_reference(const BatchNormShape& shape, double alpha, double beta, const T* x, T* y,
                                           const T* scale, const T* bias, double factor, T* running_mean,
                                           T* running_var, double epsilon, T* save_mean, T* save_inv_std);

// Inference forward: y = alpha * (scale * (x - mean) / sqrt(var + epsilon) + bias) + beta * y.
template <typename T>
void batch_norm_forward_inference_reference(const BatchNormShape& shape, double alpha, double beta, const T* x, T* y,
                                            const T* scale, const T* bias, const T* mean, const T* var, double epsilon);

// Backward of the training forward. With xhat = (x - mean) * inv_std (mean and inv_std from
// saved_mean/saved_inv_std when given, else recomputed from x and epsilon):
// dscale = sum dy * xhat, dbias = sum dy,
// dx = scale * inv_std / m * (m * dy - dbias - xhat * dscale);
// outputs blended: dx = alpha_data * dx + beta_data * dx, dscale/dbias = alpha_param * . + beta_param * .
template <typename T>
void batch_norm_backward_reference(const BatchNormShape& shape, double alpha_data, double beta_data, double alpha_param,
                                   double beta_param, const T* x, const T* dy, T* dx, const T* scale, T* dscale,
                                   T* dbias, double epsilon, const T* saved_mean, const T* saved_inv_std);

}  // namespace baton_emu
