// Emulated GPU: the reference convolution loops (conv_reference.h). All three passes walk the same
// (output element, filter tap) pairs; each pass accumulates a different product in double.
#include "conv_reference.h"

#include <cstddef>
#include <vector>

#include "gemm_reference.h"

namespace baton_emu {
namespace {

// Calls visit(x_index, w_index, y_index) for every filter tap of every output element whose input
// position lies inside x (taps over the zero padding contribute nothing and are skipped).
template <typename Visit>
void for_each_tap(const ConvShape& s, Visit&& visit) {
  const int out_h = s.out_h(), out_w = s.out_w();
  const int c_per_group = s.c / s.groups, k_per_group = s.k / s.groups;
  for (int n = 0; n < s.n; ++n) {
    for (int ko = 0; ko < s.k; ++ko) {
      const int group = ko / k_per_group;
      for (int p = 0; p < out_h; ++p) {
        for (int q = 0; q < out_w; ++q) {
          const int64_t y_index = ((int64_t{n} * s.k + ko) * out_h + p) * out_w + q;
          for (int cc = 0; cc < c_per_group; ++cc) {
            const int ci = group * c_per_group + cc;
            for (int i = 0; i < s.r; ++i) {
              const int hi = p * s.stride_h - s.pad_h + i * s.dilation_h;
              if (hi < 0 || hi >= s.h) continue;
              for (int j = 0; j < s.s; ++j) {
                const int wi = q * s.stride_w - s.pad_w + j * s.dilation_w;
                if (wi < 0 || wi >= s.w) continue;
                const int fi = s.flip_filter ? s.r - 1 - i : i;
                const int fj = s.flip_filter ? s.s - 1 - j : j;
                const int64_t x_index = ((int64_t{n} * s.c + ci) * s.h + hi) * s.w + wi;
                const int64_t w_index = ((int64_t{ko} * c_per_group + cc) * s.r + fi) * s.s + fj;
                visit(x_index, w_index, y_index);
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
double load(const T* data, int64_t index, bool tf32) {
  if constexpr (sizeof(T) == sizeof(float)) {
    if (tf32) return round_to_tf32(data[index]);
  }
  return static_cast<double>(data[index]);
}

template <typename T>
void blend(const std::vector<double>& result, double alpha, double beta, T* out) {
  for (size_t i = 0; i < result.size(); ++i) {
    const double prior = beta == 0 ? 0.0 : beta * static_cast<double>(out[i]);
    out[i] = static_cast<T>(alpha * result[i] + prior);
  }
}

}  // namespace

template <typename T>
void conv_forward_reference(const ConvShape& s, double alpha, const T* x, const T* w, double beta, T* y, bool tf32) {
  std::vector<double> sum(static_cast<size_t>(s.y_elements()), 0.0);
  for_each_tap(s, [&](int64_t xi, int64_t wi, int64_t yi) { sum[yi] += load(x, xi, tf32) * load(w, wi, tf32); });
  blend(sum, alpha, beta, y);
}

template <typename T>
void conv_backward_data_reference(const ConvShape& s, double alpha, const T* w, const T* dy, double beta, T* dx,
                                  bool tf32) {
  std::vector<double> sum(static_cast<size_t>(s.x_elements()), 0.0);
  for_each_tap(s, [&](int64_t xi, int64_t wi, int64_t yi) { sum[xi] += load(w, wi, tf32) * load(dy, yi, tf32); });
  blend(sum, alpha, beta, dx);
}

template <typename T>
void conv_backward_filter_reference(const ConvShape& s, double alpha, const T* x, const T* dy, double beta, T* dw,
                                    bool tf32) {
  std::vector<double> sum(static_cast<size_t>(s.w_elements()), 0.0);
  for_each_tap(s, [&](int64_t xi, int64_t wi, int64_t yi) { sum[wi] += load(x, xi, tf32) * load(dy, yi, tf32); });
  blend(sum, alpha, beta, dw);
}

#define BATON_EMU_INSTANTIATE_CONV(T)                                                                            \
  template void conv_forward_reference<T>(const ConvShape&, double, const T*, const T*, double, T*, bool);       \
  template void conv_backward_data_reference<T>(const ConvShape&, double, const T*, const T*, double, T*, bool); \
  template void conv_backward_filter_reference<T>(const ConvShape&, double, const T*, const T*, double, T*, bool);
BATON_EMU_INSTANTIATE_CONV(float)
BATON_EMU_INSTANTIATE_CONV(double)
#undef BATON_EMU_INSTANTIATE_CONV

}  // namespace baton_emu
