// Float32 convolution on oneDNN: forward, backward data and backward weights primitives, cached per
// pass, geometry and activation formats. Plain activations: the primitives take the layouts they
// prefer and each call reorders into them; channels-last ones: they compute in NHWC, no reorder.
#include "kernels/cpu/conv_dnnl.h"

#include <memory>
#include <sstream>
#include <string>

#include "kernels/cpu/dnnl_call.h"

namespace baton::kernels::cpu {
namespace {

enum class Pass { forward, backward_data, backward_filter };

using dims = dnnl::memory::dims;

struct ConvDescs {
  dims x, w, y, strides, dilates, padding;
};

ConvDescs descs(const ConvGeometry& g) {
  // Filters of a grouped convolution are [groups, K / groups, C / groups, R, S] to oneDNN.
  dims w = g.groups == 1 ? dims{g.k, g.c, g.r, g.s} : dims{g.groups, g.group_filters(), g.group_channels(), g.r, g.s};
  // oneDNN counts dilation from 0 (1 is ours for "none"); padding is symmetric, as PyTorch's.
  return {.x = {g.n, g.c, g.h, g.w},
          .w = std::move(w),
          .y = {g.n, g.k, g.p, g.q},
          .strides = {g.stride_h, g.stride_w},
          .dilates = {g.dilation_h - 1, g.dilation_w - 1},
          .padding = {g.pad_h, g.pad_w}};
}

std::string cache_key(Pass pass, const ConvGeometry& g, ConvFormats f) {
  std::ostringstream key;
  key << "conv2d/" << static_cast<int>(pass) << '/' << f.x_channels_last << f.y_channels_last;
  for (const int64_t v : {g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.p, g.q, g.stride_h, g.stride_w, g.pad_h, g.pad_w,
                          g.dilation_h, g.dilation_w, g.groups}) {
    key << '/' << v;
  }
  return key.str();
}

dnnl::memory::desc nhwc_f32(const dims& d) {
  return dnnl::memory::desc(d, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc);
}

// The activations' layout in the user's tensors, and in the primitive (NHWC when either side is).
dnnl::memory::desc user_activation(const dims& d, bool channels_last) {
  return channels_last ? nhwc_f32(d) : dnnl_plain_f32(d);
}
dnnl::memory::desc inner_activation(const dims& d, ConvFormats f) {
  return f.x_channels_last || f.y_channels_last ? nhwc_f32(d) : dnnl_any_f32(d);
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvDescs& d, ConvFormats f) {
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                             inner_activation(d.x, f), dnnl_any_f32(d.w), inner_activation(d.y, f),
                                             d.strides, d.dilates, d.padding, d.padding);
  return {desc, dnnl_user_scratchpad(), dnnl_engine()};
}

// The primitive descriptor of a backward pass (Primitive: convolution_backward_data or _weights).
template <typename Primitive>
typename Primitive::primitive_desc backward_pd(const ConvDescs& d, const dnnl::memory::desc& inner_x,
                                               const dnnl::memory::desc& inner_y,
                                               const dnnl::convolution_forward::primitive_desc& fwd) {
  const typename Primitive::desc desc(dnnl::algorithm::convolution_direct, inner_x, dnnl_any_f32(d.w), inner_y,
                                      d.strides, d.dilates, d.padding, d.padding);
  return {desc, dnnl_user_scratchpad(), dnnl_engine(), fwd};
}

std::shared_ptr<const DnnlCall> make_call(Pass pass, const ConvGeometry& g, ConvFormats f) {
  const ConvDescs d = descs(g);
  try {
    const auto fwd = forward_pd(d, f);
    const auto x = user_activation(d.x, f.x_channels_last), w = dnnl_plain_f32(d.w),
               y = user_activation(d.y, f.y_channels_last);
    const auto inner_x = inner_activation(d.x, f), inner_y = inner_activation(d.y, f);
    switch (pass) {
      case Pass::forward:
        return make_dnnl_call<dnnl::convolution_forward>(fwd,
                                                         {{DNNL_ARG_SRC, x, fwd.src_desc(), DnnlRole::input},
                                                          {DNNL_ARG_WEIGHTS, w, fwd.weights_desc(), DnnlRole::input},
                                                          {DNNL_ARG_DST, y, fwd.dst_desc(), DnnlRole::output}});
      case Pass::backward_data: {
        const auto pd = backward_pd<dnnl::convolution_backward_data>(d, inner_x, inner_y, fwd);
        return make_dnnl_call<dnnl::convolution_backward_data>(
            pd, {{DNNL_ARG_DIFF_DST, y, pd.diff_dst_desc(), DnnlRole::input},
                 {DNNL_ARG_WEIGHTS, w, pd.weights_desc(), DnnlRole::input},
                 {DNNL_ARG_DIFF_SRC, x, pd.diff_src_desc(), DnnlRole::output}});
      }
      case Pass::backward_filter: {
        const auto pd = backward_pd<dnnl::convolution_backward_weights>(d, inner_x, inner_y, fwd);
        return make_dnnl_call<dnnl::convolution_backward_weights>(
            pd, {{DNNL_ARG_SRC, x, pd.src_desc(), DnnlRole::input},
                 {DNNL_ARG_DIFF_DST, y, pd.diff_dst_desc(), DnnlRole::input},
                 {DNNL_ARG_DIFF_WEIGHTS, w, pd.diff_weights_desc(), DnnlRole::accumulate}});
      }
    }
  } catch (const dnnl::error&) {
    // No implementation for this geometry (dnnl_unimplemented): the reference serves it.
  }
  return nullptr;
}

bool run(Pass pass, const ConvGeometry& g, ConvFormats f, std::initializer_list<const void*> data,
         const Workspace& workspace) {
  return run_dnnl_call(cached_dnnl_call(cache_key(pass, g, f), [&] { return make_call(pass, g, f); }), data, workspace);
}

}  // namespace

bool dnnl_conv2d_forward(const ConvGeometry& g, ConvFormats f, const float* x, const float* w, float* y,
                         const Workspace& workspace) {
  return run(Pass::forward, g, f, {x, w, y}, workspace);
}

bool dnnl_conv2d_backward_data(const ConvGeometry& g, ConvFormats f, const float* dy, const float* w, float* dx,
                               const Workspace& workspace) {
  return run(Pass::backward_data, g, f, {dy, w, dx}, workspace);
}

bool dnnl_conv2d_backward_filter(const ConvGeometry& g, ConvFormats f, const float* x, const float* dy, float* dw,
                                 const Workspace& workspace) {
  return run(Pass::backward_filter, g, f, {x, dy, dw}, workspace);
}

}  // namespace baton::kernels::cpu
