// The fixture of the CUDA elementwise and activation tests: where tensors start (16-byte aligned, or
// one element in), and an op run on the GPU, into a poisoned output and in place, against the same
// op on the CPU.
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "runtime/core/context.h"
#include "runtime/core/tensor.h"
#include "tests/kernels/op_test_support.h"
#include "tests/support/test_support.h"

namespace baton::testing {

// Where tensors start: all 16-byte aligned, the inputs one element in, or the output one element in.
enum class Layout { aligned, inputs_offset, output_offset };
inline constexpr Layout kLayouts[] = {Layout::aligned, Layout::inputs_offset, Layout::output_offset};

// An op under test on (a, b, out); unary ops ignore b.
using ElementwiseOp = std::function<void(Context&, const Tensor& a, const Tensor& b, const Tensor& out)>;

class ElementwiseCudaTest : public CudaOpTest {
 protected:
  // op(a, b) on the CPU, then on the GPU (the inputs copied there at `layout`) into a poisoned output
  // and in place (out = a); expect(gpu result, cpu result) judges each.
  void compare_with_cpu(const ElementwiseOp& op, const Tensor& a, const Tensor& b, Layout layout,
                        const std::function<void(const Tensor&, const Tensor&)>& expect) {
    const Tensor expected = Tensor::empty(a.shape(), a.dtype(), cpu);
    op(cpu, a, b, expected);

    const bool inputs_offset = layout == Layout::inputs_offset;
    const Tensor ga = copy_to(a, gs(), inputs_offset), gb = copy_to(b, gs(), inputs_offset);
    const Tensor out = poisoned(a.shape(), a.dtype(), gs(), layout == Layout::output_offset);
    op(*gpu, ga, gb, out);
    expect(out, expected);
    op(*gpu, ga, gb, ga);
    expect(ga, expected);
  }

  // The GPU result has the CPU's bits.
  void expect_same_bits(const Tensor& actual, const Tensor& expected) {
    EXPECT_EQ(bytes_of(actual, gs()), bytes_of(expected, cpu.stream()))
        << "differs from the CPU: " << actual.debug_string(gs(), 8) << " vs " << expected.debug_string(cpu.stream(), 8);
  }
};

}  // namespace baton::testing
