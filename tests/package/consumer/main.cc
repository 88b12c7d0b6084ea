// Uses an installed baton: a tensor from a vector on cpu:0, copied to the virtual device cpu:1,
// read back and checked; an op argument check that must fail. Exits non-zero when anything is wrong.
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/op_checks.h"
#include "runtime/core/build_config.h"
#include "runtime/core/context.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "consumer: FAILED: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main() {
  try {
    baton::Context ctx(baton::Device::cpu(0));
    const std::vector<float> values{1.5f, -2.0f, 3.25f, 0.125f, 42.0f, -7.5f};
    const baton::Tensor a = baton::Tensor::from_vector(values, baton::Shape{2, 3}, ctx.stream());
    const baton::Tensor b = a.to(baton::Device::cpu(1), ctx.stream());
    if (b.device() != baton::Device::cpu(1)) return fail("copy is on " + b.device().str() + ", expected cpu:1");
    const std::vector<float> back = b.to_vector<float>(ctx.stream());
    std::printf("consumer: baton %s (CUDA %d): %s\n", BATON_VERSION_STRING, BATON_HAVE_CUDA,
                b.debug_string(ctx.stream()).c_str());
    if (back != values) return fail("values changed in the copy to cpu:1");

    baton::kernels::check_same_shape("consumer", {{"a", a}, {"b", b}});
    const baton::Tensor c = baton::Tensor::from_vector(values, baton::Shape{3, 2}, ctx.stream());
    try {
      baton::kernels::check_same_shape("consumer", {{"a", a}, {"c", c}});
      return fail("check_same_shape accepted shapes [2, 3] and [3, 2]");
    } catch (const baton::Error& e) {
      std::printf("consumer: expected error: %s\n", e.what());
    }
  } catch (const baton::Error& e) {
    return fail(std::string("baton::Error: ") + e.what());
  }
  std::printf("consumer: ok\n");
  return 0;
}
