// MPI-typed helpers of the mpi backend's sources: the MPI datatype of a dtype and the reductions in
// rank order or MPI's. It includes <mpi.h>, so it is internal: not installed with baton's headers.
#pragma once

#include <mpi.h>

#include "parallel/comm/communicator.h"

namespace baton::comm {

// The datatype MPI moves a dtype's elements as (f16 and bf16 as 16-bit unsigned integers: MPI only
// moves them, baton sums them).
MPI_Datatype mpi_type(DType dtype);

// all_reduce of `buffer` over `comm` (this process is `rank` of `size`), summed in rank order: each
// rank gathers chunk `rank` of every rank's buffer (MPI_Alltoallv), reduces it with reduce_in_order
// (rank 0 + rank 1 + ...), and every rank gathers every reduced chunk (MPI_Allgatherv in place).
// The same bits on every rank and in every backend, whatever algorithms MPI picks.
void all_reduce_in_rank_order(MPI_Comm comm, int rank, int size, const Tensor& buffer, ReduceOp op);
// reduce_scatter: MPI_Alltoall of the slices, then this rank's slice reduced in rank order.
void reduce_scatter_in_rank_order(MPI_Comm comm, int size, const Tensor& input, const Tensor& output, ReduceOp op);

// The same through MPI's own reductions (MpiReduction::native): MPI_Allreduce and
// MPI_Reduce_scatter_block with MPI_SUM, then a mean divides once; f16 and bf16 (which MPI cannot
// sum) go to the rank-order versions above.
void all_reduce_native(MPI_Comm comm, int rank, int size, const Tensor& buffer, ReduceOp op);
void reduce_scatter_native(MPI_Comm comm, int size, const Tensor& input, const Tensor& output, ReduceOp op);

}  // namespace baton::comm
