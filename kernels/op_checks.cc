// Argument checks shared by every op.
#include "kernels/op_checks.h"

#include <string>

namespace baton::kernels {

void check_on_context(std::string_view op, const Context& ctx, std::initializer_list<NamedTensor> tensors) {
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.defined(), op, ": argument '", t.name, "' is an undefined tensor");
    BATON_CHECK(t.tensor.device() == ctx.device(), op, ": argument '", t.name, "' is on ", t.tensor.device().str(),
                " but the op runs on ", ctx.device().str());
  }
}

void check_same_shape(std::string_view op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor& first = *tensors.begin();
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.shape() == first.tensor.shape(), op, ": argument '", t.name, "' has shape ",
                t.tensor.shape().str(), ", expected ", first.tensor.shape().str(), " (the shape of '", first.name,
                "')");
  }
}

void check_same_dtype(std::string_view op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor& first = *tensors.begin();
  for (const NamedTensor& t : tensors) {
    BATON_CHECK(t.tensor.dtype() == first.tensor.dtype(), op, ": argument '", t.name, "' has dtype ",
                dtype_name(t.tensor.dtype()), ", expected ", dtype_name(first.tensor.dtype()), " (the dtype of '",
                first.name, "')");
  }
}

void check_dtype_in(std::string_view op, const NamedTensor& t, std::initializer_list<DType> allowed) {
  std::string names;
  for (DType d : allowed) {
    if (d == t.tensor.dtype()) return;
    names += names.empty() ? "" : ", ";
    names += dtype_name(d);
  }
  BATON_FAIL(op, ": argument '", t.name, "' has dtype ", dtype_name(t.tensor.dtype()), ", expected one of ", names);
}

void check_rank(std::string_view op, const NamedTensor& t, int rank) {
  BATON_CHECK(t.tensor.rank() == rank, op, ": argument '", t.name, "' has shape ", t.tensor.shape().str(),
              ", expected ", rank, " dimensions");
}

}  // namespace baton::kernels
