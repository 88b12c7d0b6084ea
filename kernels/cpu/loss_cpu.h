// CPU reference for the loss ops (kernels/loss.h): row-wise softmax cross-entropy and top-k counts.
// Element arithmetic in Acc<T> (float, double for f64); sums over classes and rows in double. Rows
// run in parallel (kernels/cpu/parallel.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scalar.h"
#include "kernels/loss_math.h"

namespace baton::kernels::cpu {

// The number of labels outside [0, classes); the first one's row and value when there is one.
template <typename L>
int64_t count_bad_labels(const L* labels, int64_t rows, int64_t classes, int64_t& first_row, int64_t& first_value) {
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t y = static_cast<int64_t>(labels[r]);
    if (y >= 0 && y < classes) continue;
    if (bad++ == 0) {
      first_row = r;
      first_value = y;
    }
  }
  return bad;
}

// Writes softmax(logits) to probs and returns the mean smoothed cross-entropy over the rows
// (kernels/loss_math.h), with z = x - max(x) and s = sum_c exp(z_c) per row. Rows run in parallel;
// their losses are added in row order, so the bits do not depend on the thread count.
template <typename T, typename L>
double softmax_cross_entropy_forward(const T* logits, const L* labels, int64_t rows, int64_t classes, double smoothing,
                                     T* probs) {
  using A = Acc<T>;
  std::vector<double> row_loss(static_cast<size_t>(rows));
  rows_for(rows, 3 * classes, [&](int64_t r) {
    const T* x = logits + r * classes;
    T* p = probs + r * classes;
    A max = -std::numeric_limits<A>::infinity();
    for (int64_t c = 0; c < classes; ++c) {
      const A v = load(x[c]);
      max = v > max ? v : max;  // NaN never wins (as fmax); it reaches the loss through z below
    }
    double sum_exp = 0.0, sum_z = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      const A z = load(x[c]) - max;
      sum_exp += static_cast<double>(std::exp(z));
      sum_z += static_cast<double>(z);
    }
    const A denominator = static_cast<A>(sum_exp);
    for (int64_t c = 0; c < classes; ++c) p[c] = store<T>(std::exp(load(x[c]) - max) / denominator);
    const double z_label = static_cast<double>(load(x[static_cast<int64_t>(labels[r])]) - max);
    row_loss[static_cast<size_t>(r)] = smoothed_cross_entropy(std::log(sum_exp), z_label, sum_z, 1.0 - smoothing,
                                                              smoothing / static_cast<double>(classes));
  });
  double total = 0.0;
  for (const double loss : row_loss) total += loss;
  return total / static_cast<double>(rows);
}

// dlogits = grad_scale * (probs - q) / rows.
template <typename T, typename L>
void softmax_cross_entropy_backward(const T* probs, const L* labels, int64_t rows, int64_t classes, double smoothing,
                                    double grad_scale, T* dlogits) {
  using A = Acc<T>;
  const A scale = static_cast<A>(grad_scale / static_cast<double>(rows));
  const A q_other = static_cast<A>(smoothing / static_cast<double>(classes));
  const A q_label = static_cast<A>(1.0 - smoothing + smoothing / static_cast<double>(classes));
  rows_for(rows, classes, [&](int64_t r) {
    const int64_t label = static_cast<int64_t>(labels[r]);
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t i = r * classes + c;
      dlogits[i] = store<T>(scale * (load(probs[i]) - (c == label ? q_label : q_other)));
    }
  });
}

// Rows where fewer than k logits are strictly greater than the label's (which is not NaN).
template <typename T, typename L>
int64_t topk_correct(const T* logits, const L* labels, int64_t rows, int64_t classes, int k) {
  using A = Acc<T>;
  int64_t correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = logits + r * classes;
    const A label_logit = load(x[static_cast<int64_t>(labels[r])]);
    if (std::isnan(label_logit)) continue;
    int64_t greater = 0;
    for (int64_t c = 0; c < classes; ++c) greater += load(x[c]) > label_logit ? 1 : 0;
    correct += greater < k ? 1 : 0;
  }
  return correct;
}

}  // namespace baton::kernels::cpu
