// Emulated GPU: the reference batch-normalisation loops (batch_norm_reference.h).
#include "batch_norm_reference.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace baton_emu {
namespace {

// out = alpha * value + beta * out, not reading out when beta == 0.
template <typename T>
void blend_into(T& out, double alpha, double value, double beta) {
  const double prior = beta == 0 ? 0.0 : beta * static_cast<double>(out);
  out = static_cast<T>(alpha * value + prior);
}

struct Statistics {
  std::vector<double> mean, variance;  // biased variance
};

template <typename T>
Statistics batch_statistics(const BatchNormShape& s, const T* x) {
  const auto params = static_cast<size_t>(s.parameters());
  Statistics st{std::vector<double>(params, 0.0), std::vector<double>(params, 0.0)};
  const auto m = static_cast<double>(s.count());
  for (int64_t e = 0; e < s.elements(); ++e) st.mean[s.parameter_of(e)] += static_cast<double>(x[e]);
  for (double& mean : st.mean) mean /= m;
  for (int64_t e = 0; e < s.elements(); ++e) {
    const double d = static_cast<double>(x[e]) - st.mean[s.parameter_of(e)];
    st.variance[s.parameter_of(e)] += d * d;
  }
  for (double& var : st.variance) var /= m;
  return st;
}

}  // namespace

template <typename T>
void batch_norm_forward_training_reference(const BatchNormShape& s, double alpha, double beta, const T* x, T* y,
                                           const T* scale, const T* bias, double factor, T* running_mean,
                                           T* running_var, double epsilon, T* save_mean, T* save_inv_std) {
  const Statistics st = batch_statistics(s, x);
  const auto m = static_cast<double>(s.count());
  for (int64_t e = 0; e < s.elements(); ++e) {
    const int64_t p = s.parameter_of(e);
    const double xhat = (static_cast<double>(x[e]) - st.mean[p]) / std::sqrt(st.variance[p] + epsilon);
    blend_into(y[e], alpha, static_cast<double>(scale[p]) * xhat + static_cast<double>(bias[p]), beta);
  }
  for (int64_t p = 0; p < s.parameters(); ++p) {
    if (running_mean != nullptr) {
      running_mean[p] = static_cast<T>(factor * st.mean[p] + (1 - factor) * static_cast<double>(running_mean[p]));
      const double unbiased = st.variance[p] * m / (m - 1);
      running_var[p] = static_cast<T>(factor * unbiased + (1 - factor) * static_cast<double>(running_var[p]));
    }
    if (save_mean != nullptr) {
      save_mean[p] = static_cast<T>(st.mean[p]);
      save_inv_std[p] = static_cast<T>(1 / std::sqrt(st.variance[p] + epsilon));
    }
  }
}

template <typename T>
void batch_norm_forward_inference_reference(const BatchNormShape& s, double alpha, double beta, const T* x, T* y,
                                            const T* scale, const T* bias, const T* mean, const T* var,
                                            double epsilon) {
  for (int64_t e = 0; e < s.elements(); ++e) {
    const int64_t p = s.parameter_of(e);
    const double xhat =
        (static_cast<double>(x[e]) - static_cast<double>(mean[p])) / std::sqrt(static_cast<double>(var[p]) + epsilon);
    blend_into(y[e], alpha, static_cast<double>(scale[p]) * xhat + static_cast<double>(bias[p]), beta);
  }
}

template <typename T>
void batch_norm_backward_reference(const BatchNormShape& s, double alpha_data, double beta_data, double alpha_param,
                                   double beta_param, const T* x, const T* dy, T* dx, const T* scale, T* dscale,
                                   T* dbias, double epsilon, const T* saved_mean, const T* saved_inv_std) {
  const auto params = static_cast<size_t>(s.parameters());
  std::vector<double> mean(params), inv_std(params);
  if (saved_mean != nullptr) {
    for (size_t p = 0; p < params; ++p) {
      mean[p] = static_cast<double>(saved_mean[p]);
      inv_std[p] = static_cast<double>(saved_inv_std[p]);
    }
  } else {
    const Statistics st = batch_statistics(s, x);
    for (size_t p = 0; p < params; ++p) {
      mean[p] = st.mean[p];
      inv_std[p] = 1 / std::sqrt(st.variance[p] + epsilon);
    }
  }
  std::vector<double> sum_dy(params, 0.0), sum_dy_xhat(params, 0.0);
  for (int64_t e = 0; e < s.elements(); ++e) {
    const int64_t p = s.parameter_of(e);
    const double xhat = (static_cast<double>(x[e]) - mean[p]) * inv_std[p];
    sum_dy[p] += static_cast<double>(dy[e]);
    sum_dy_xhat[p] += static_cast<double>(dy[e]) * xhat;
  }
  const auto m = static_cast<double>(s.count());
  for (int64_t e = 0; e < s.elements(); ++e) {
    const int64_t p = s.parameter_of(e);
    const double xhat = (static_cast<double>(x[e]) - mean[p]) * inv_std[p];
    const double grad = static_cast<double>(scale[p]) * inv_std[p] / m *
                        (m * static_cast<double>(dy[e]) - sum_dy[p] - xhat * sum_dy_xhat[p]);
    blend_into(dx[e], alpha_data, grad, beta_data);
  }
  for (size_t p = 0; p < params; ++p) {
    blend_into(dscale[p], alpha_param, sum_dy_xhat[p], beta_param);
    blend_into(dbias[p], alpha_param, sum_dy[p], beta_param);
  }
}

#define BATON_EMU_INSTANTIATE_BATCH_NORM(T)                                                                       \
  template void batch_norm_forward_training_reference<T>(const BatchNormShape&, double, double, const T*, T*,     \
                                                         const T*, const T*, double, T*, T*, double, T*, T*);     \
  template void batch_norm_forward_inference_reference<T>(const BatchNormShape&, double, double, const T*, T*,    \
                                                          const T*, const T*, const T*, const T*, double);        \
  template void batch_norm_backward_reference<T>(const BatchNormShape&, double, double, double, double, const T*, \
                                                 const T*, T*, const T*, T*, T*, double, const T*, const T*);
BATON_EMU_INSTANTIATE_BATCH_NORM(float)
BATON_EMU_INSTANTIATE_BATCH_NORM(double)
#undef BATON_EMU_INSTANTIATE_BATCH_NORM

}  // namespace baton_emu
