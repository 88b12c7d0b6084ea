// The per-channel batch-norm loops (kernels/cpu/batch_norm_channel.h) for float and double, each
// compiled for AVX-512, AVX2 and baseline x86-64 and chosen once, by the processor that runs them.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/cpu/batch_norm_channel.h"

namespace baton::kernels::cpu::isa {

std::array<double, 2> channel_mean_var(const float* x, const ChannelOf& at);
std::array<double, 2> channel_mean_var(const double* x, const ChannelOf& at);

void normalize_channel(const float* x, const ChannelOf& at, double mean, double scale, double shift, float* y);
void normalize_channel(const double* x, const ChannelOf& at, double mean, double scale, double shift, double* y);

std::array<double, 2> backward_sums(const float* x, const float* dy, const ChannelOf& at, double mean, double invstd);
std::array<double, 2> backward_sums(const double* x, const double* dy, const ChannelOf& at, double mean, double invstd);

void backward_dx(const float* x, const float* dy, const ChannelOf& at, double mean, double invstd, double scale,
                 double mean_dy, double mean_dy_xhat, float* dx);
void backward_dx(const double* x, const double* dy, const ChannelOf& at, double mean, double invstd, double scale,
                 double mean_dy, double mean_dy_xhat, double* dx);

// The instruction set the clones above run with on this processor: "avx512f", "avx2" or "x86-64".
const char* batch_norm_isa();

}  // namespace baton::kernels::cpu::isa
