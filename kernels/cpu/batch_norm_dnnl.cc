// oneDNN's batch normalization primitives in NHWC, cached per shape and eps like the convolutions.
#include "kernels/cpu/batch_norm_dnnl.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cpu/dnnl_call.h"

namespace baton::kernels::cpu {
namespace {

using dims = dnnl::memory::dims;
const dnnl::normalization_flags kBatchNormAffine =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

dnnl::memory::desc nhwc_data_desc(const BatchNormNhwc& d) {
  return dnnl::memory::desc(dims{d.n, d.c, d.h, d.w}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc);
}

std::string batch_norm_key(const char* pass, const BatchNormNhwc& d, float eps) {
  std::ostringstream key;
  key.precision(9);
  key << "batch_norm_nhwc/" << pass << '/' << d.n << '/' << d.c << '/' << d.h << '/' << d.w << '/' << eps;
  return key.str();
}

dnnl::batch_normalization_forward::primitive_desc batch_norm_forward_pd(const BatchNormNhwc& d, float eps) {
  const dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_training, nhwc_data_desc(d), eps,
                                                     kBatchNormAffine);
  return {desc, dnnl_user_scratchpad(), dnnl_engine()};
}

std::shared_ptr<const DnnlCall> make_batch_norm_forward(const BatchNormNhwc& d, float eps) {
  try {
    const auto pd = batch_norm_forward_pd(d, eps);
    const auto data = nhwc_data_desc(d), channel = dnnl_plain_f32(dims{d.c});
    return make_dnnl_call<dnnl::batch_normalization_forward>(pd,
                                                             {{DNNL_ARG_SRC, data, data, DnnlRole::input},
                                                              {DNNL_ARG_SCALE, channel, channel, DnnlRole::input},
                                                              {DNNL_ARG_SHIFT, channel, channel, DnnlRole::input},
                                                              {DNNL_ARG_DST, data, data, DnnlRole::output},
                                                              {DNNL_ARG_MEAN, channel, channel, DnnlRole::output},
                                                              {DNNL_ARG_VARIANCE, channel, channel, DnnlRole::output}});
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation: the reference serves it
  }
}

std::shared_ptr<const DnnlCall> make_batch_norm_backward(const BatchNormNhwc& d, float eps) {
  try {
    const auto data = nhwc_data_desc(d), channel = dnnl_plain_f32(dims{d.c});
    const dnnl::batch_normalization_backward::desc desc(dnnl::prop_kind::backward, data, data, eps, kBatchNormAffine);
    const dnnl::batch_normalization_backward::primitive_desc pd(desc, dnnl_user_scratchpad(), dnnl_engine(),
                                                                batch_norm_forward_pd(d, eps));
    return make_dnnl_call<dnnl::batch_normalization_backward>(
        pd, {{DNNL_ARG_SRC, data, data, DnnlRole::input},
             {DNNL_ARG_DIFF_DST, data, data, DnnlRole::input},
             {DNNL_ARG_SCALE, channel, channel, DnnlRole::input},
             {DNNL_ARG_SHIFT, channel, channel, DnnlRole::input},
             {DNNL_ARG_MEAN, channel, channel, DnnlRole::input},
             {DNNL_ARG_VARIANCE, channel, channel, DnnlRole::input},
             {DNNL_ARG_DIFF_SRC, data, data, DnnlRole::output},
             {DNNL_ARG_DIFF_SCALE, channel, channel, DnnlRole::accumulate},
             {DNNL_ARG_DIFF_SHIFT, channel, channel, DnnlRole::accumulate}});
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

}  // namespace

bool dnnl_batch_norm_forward_train_nhwc(const BatchNormNhwc& d, float eps, const float* x, const float* weight,
                                        const float* bias, float* y, float* mean, float* var,
                                        const Workspace& workspace) {
  const auto call =
      cached_dnnl_call(batch_norm_key("forward", d, eps), [&] { return make_batch_norm_forward(d, eps); });
  return run_dnnl_call(call, {x, weight, bias, y, mean, var}, workspace);
}

bool dnnl_batch_norm_backward_train_nhwc(const BatchNormNhwc& d, float eps, const float* x, const float* dy,
                                         const float* weight, const float* mean, const float* var, float* dx,
                                         float* weight_grad, float* bias_grad, const Workspace& workspace) {
  const auto call =
      cached_dnnl_call(batch_norm_key("backward", d, eps), [&] { return make_batch_norm_backward(d, eps); });
  // oneDNN 2.6 refuses to run the backward without the shift, which the gradients do not depend on:
  // the weight's memory stands in for it.
  return run_dnnl_call(call, {x, dy, weight, weight, mean, var, dx, weight_grad, bias_grad}, workspace);
}

}  // namespace baton::kernels::cpu
