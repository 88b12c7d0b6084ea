// The mpi backend's datatypes and its reductions in rank order (all-to-all, local sum, all-gather).
#include "parallel/comm/mpi_calls.h"

#include <vector>

#include "parallel/comm/collective_args.h"
#include "parallel/comm/mpi_engine.h"
#include "parallel/comm/reduce_kernel.h"
#include "runtime/core/enum_table.h"

namespace baton::comm {
namespace {

std::byte* at(void* base, int64_t elements, size_t element_size) {
  return static_cast<std::byte*>(base) + static_cast<size_t>(elements) * element_size;
}

// MPI sums these dtypes itself; f16 and bf16 travel as 16-bit integers and are summed by baton.
bool mpi_sums(DType dtype) { return dtype != DType::f16 && dtype != DType::bf16; }

// A mean's division of the MPI sum in `data`, once, as reduce_in_order divides.
void divide_once(DType dtype, ReduceOp op, int size, void* data, int64_t count) {
  if (op != ReduceOp::mean) return;
  const void* source = data;
  reduce_in_order(dtype, op, size, {&source, 1}, {&data, 1}, count);
}

// Reduces the `parts` consecutive runs of `count` elements of `gathered` into `dest`, in run order.
void reduce_runs(DType dtype, ReduceOp op, int parts, std::vector<std::byte>& gathered, int64_t count, void* dest) {
  std::vector<const void*> sources;
  for (int k = 0; k < parts; ++k) sources.push_back(at(gathered.data(), k * count, dtype_size(dtype)));
  reduce_in_order(dtype, op, parts, sources, {&dest, 1}, count);
}

}  // namespace

MPI_Datatype mpi_type(DType dtype) {
  // In DType's order; f16 and bf16 travel as their bits.
  static const MPI_Datatype kTypes[] = {MPI_FLOAT,   MPI_DOUBLE,  MPI_UINT16_T, MPI_UINT16_T,
                                        MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T};
  const MPI_Datatype type = enum_lookup<DType::u8>(dtype, kTypes, MPI_DATATYPE_NULL);
  BATON_CHECK(type != MPI_DATATYPE_NULL, "mpi: no MPI datatype for dtype value ", static_cast<int>(dtype));
  return type;
}

void all_reduce_in_rank_order(MPI_Comm comm, int rank, int size, const Tensor& buffer, ReduceOp op) {
  const DType dtype = buffer.dtype();
  const size_t element_size = dtype_size(dtype);
  const MPI_Datatype type = mpi_type(dtype);
  std::vector<int> counts(static_cast<size_t>(size));
  std::vector<int> displacements(counts.size());
  for (int k = 0; k < size; ++k) {
    const ElementRange range = chunk_range(buffer.numel(), size, k);
    counts[static_cast<size_t>(k)] = static_cast<int>(range.count);
    displacements[static_cast<size_t>(k)] = static_cast<int>(range.begin);
  }
  const int mine = counts[static_cast<size_t>(rank)];
  std::vector<int> gathered_counts(counts.size(), mine);
  std::vector<int> gathered_displacements(counts.size());
  for (int k = 0; k < size; ++k) gathered_displacements[static_cast<size_t>(k)] = k * mine;
  std::vector<std::byte> gathered(static_cast<size_t>(size) * static_cast<size_t>(mine) * element_size);
  void* data = buffer.data_ptr();
  check_mpi(MPI_Alltoallv(data, counts.data(), displacements.data(), type, gathered.data(), gathered_counts.data(),
                          gathered_displacements.data(), type, comm),
            "MPI_Alltoallv");
  reduce_runs(dtype, op, size, gathered, mine, at(data, displacements[static_cast<size_t>(rank)], element_size));
  check_mpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), displacements.data(), type, comm),
            "MPI_Allgatherv");
}

void reduce_scatter_in_rank_order(MPI_Comm comm, int size, const Tensor& input, const Tensor& output, ReduceOp op) {
  const DType dtype = input.dtype();
  const int count = static_cast<int>(output.numel());
  const MPI_Datatype type = mpi_type(dtype);
  std::vector<std::byte> gathered(static_cast<size_t>(size) * static_cast<size_t>(count) * dtype_size(dtype));
  check_mpi(MPI_Alltoall(input.data_ptr(), count, type, gathered.data(), count, type, comm), "MPI_Alltoall");
  reduce_runs(dtype, op, size, gathered, count, output.data_ptr());
}

void all_reduce_native(MPI_Comm comm, int rank, int size, const Tensor& buffer, ReduceOp op) {
  const DType dtype = buffer.dtype();
  if (!mpi_sums(dtype)) return all_reduce_in_rank_order(comm, rank, size, buffer, op);
  const int count = static_cast<int>(buffer.numel());
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data_ptr(), count, mpi_type(dtype), MPI_SUM, comm), "MPI_Allreduce");
  divide_once(dtype, op, size, buffer.data_ptr(), count);
}

void reduce_scatter_native(MPI_Comm comm, int size, const Tensor& input, const Tensor& output, ReduceOp op) {
  const DType dtype = input.dtype();
  if (!mpi_sums(dtype)) return reduce_scatter_in_rank_order(comm, size, input, output, op);
  const int count = static_cast<int>(output.numel());
  check_mpi(MPI_Reduce_scatter_block(input.data_ptr(), output.data_ptr(), count, mpi_type(dtype), MPI_SUM, comm),
            "MPI_Reduce_scatter_block");
  divide_once(dtype, op, size, output.data_ptr(), count);
}

}  // namespace baton::comm
