// Channel concatenation ops: argument checks, then strided row copies on the CPU or CUDA.
#include "kernels/concat.h"

#include <string>
#include <string_view>

#include "kernels/cpu/concat_cpu.h"
#include "kernels/cuda/concat_cuda.h"
#include "kernels/device_dispatch.h"
#include "kernels/op_checks.h"

namespace baton::kernels {
namespace {

// "[2, *, 5, 5]": a shape with dimension 1 left open, for messages.
std::string shape_outside_dim1(const Shape& shape) {
  std::string s = "[";
  for (int d = 0; d < shape.rank(); ++d) {
    s += d == 0 ? "" : ", ";
    s += d == 1 ? "*" : std::to_string(shape[d]);
  }
  return s + "]";
}

// `whole` has rank >= 2; `part` is on the context's device, has whole's dtype and rank and equal
// sizes outside dimension 1, and shares no memory with `whole`.
void check_part(std::string_view op, const Context& ctx, const NamedTensor& whole, const NamedTensor& part) {
  check_on_context(op, ctx, {part});
  check_same_dtype(op, {whole, part});
  const Shape &w = whole.tensor.shape(), &p = part.tensor.shape();
  bool same = p.rank() == w.rank();
  for (int d = 0; same && d < w.rank(); ++d) same = d == 1 || p[d] == w[d];
  BATON_CHECK(same, op, ": argument '", part.name, "' has shape ", p.str(), ", expected ", shape_outside_dim1(w),
              " (the shape of '", whole.name, "' outside dimension 1)");
  check_overlap(op, whole, {part}, Overlap::none);
}

void check_whole(std::string_view op, const Context& ctx, const NamedTensor& whole) {
  check_on_context(op, ctx, {whole});
  BATON_CHECK(whole.tensor.rank() >= 2, op, ": argument '", whole.name, "' has shape ", whole.tensor.shape().str(),
              ", expected at least 2 dimensions ([N, C, ...])");
}

// Copies channels between `whole` and `part` (checked): part's C channels are whole's channels
// [begin, begin + C). to_whole: part -> whole (concat), else whole -> part (split).
void copy_channels(std::string_view op, Context& ctx, const Tensor& whole, int64_t begin, const Tensor& part,
                   bool to_whole) {
  if (part.numel() == 0) return;  // nothing to copy; an empty tensor may have no memory at all
  const auto element = static_cast<int64_t>(dtype_size(whole.dtype()));
  const int64_t inner = whole.shape().stride(1) * element;  // bytes of one channel of one row
  const int64_t whole_pitch = whole.size(1) * inner, part_pitch = part.size(1) * inner;
  auto* whole_bytes = static_cast<unsigned char*>(whole.data_ptr()) + begin * inner;
  void* part_bytes = part.data_ptr();
  const void* src = to_whole ? part_bytes : whole_bytes;
  void* dst = to_whole ? static_cast<void*>(whole_bytes) : part_bytes;
  const int64_t src_pitch = to_whole ? part_pitch : whole_pitch, dst_pitch = to_whole ? whole_pitch : part_pitch;
  on_device(
      op, ctx, [&] { cpu::copy_rows(src, src_pitch, dst, dst_pitch, whole.size(0), part_pitch); },
      [&](auto& cuda_ctx) { cuda::copy_rows(cuda_ctx, src, src_pitch, dst, dst_pitch, whole.size(0), part_pitch); });
}

// Checks every part against the whole and that their channels add up to the whole's, then copies
// each part to (to_whole) or from the whole, part i at the channels after those of parts 0 .. i-1.
void copy_partition(std::string_view op, Context& ctx, const NamedTensor& whole, std::span<const Tensor> parts,
                    std::string_view parts_name, bool to_whole) {
  check_whole(op, ctx, whole);
  BATON_CHECK(!parts.empty(), op, ": argument '", parts_name, "' is empty, expected at least one tensor");
  int64_t channels = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string name = std::string(parts_name) + "[" + std::to_string(i) + "]";
    check_part(op, ctx, whole, {name, parts[i]});
    channels += parts[i].size(1);
  }
  BATON_CHECK(channels == whole.tensor.size(1), op, ": the ", parts_name, " have ", channels,
              " channels (dimension 1) in all, expected ", whole.tensor.size(1), " (dimension 1 of '", whole.name,
              "', shape ", whole.tensor.shape().str(), ")");
  int64_t begin = 0;
  for (const Tensor& part : parts) {
    copy_channels(op, ctx, whole.tensor, begin, part, to_whole);
    begin += part.size(1);
  }
}

}  // namespace

void concat_channels(Context& ctx, std::span<const Tensor> inputs, const Tensor& out) {
  copy_partition("concat_channels", ctx, {"out", out}, inputs, "inputs", true);
}

void split_channels(Context& ctx, const Tensor& x, std::span<const Tensor> outputs) {
  copy_partition("split_channels", ctx, {"x", x}, outputs, "outputs", false);
}

void slice_channels(Context& ctx, const Tensor& x, int64_t begin, const Tensor& out) {
  constexpr std::string_view op = "slice_channels";
  check_whole(op, ctx, {"x", x});
  check_part(op, ctx, {"x", x}, {"out", out});
  BATON_CHECK(begin >= 0 && begin + out.size(1) <= x.size(1), op, ": channels [", begin, ", ", begin + out.size(1),
              ") of argument 'x' (shape ", x.shape().str(), ") were asked for (argument 'begin' is ", begin,
              ", 'out' has shape ", out.shape().str(), "), expected a range inside [0, ", x.size(1), ")");
  copy_channels(op, ctx, x, begin, out, false);
}

}  // namespace baton::kernels
