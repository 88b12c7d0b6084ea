// The in-process backend ("inproc"): the ranks are threads of one process (by convention rank r
// computes on the virtual device cpu:r) that communicate through shared memory.
#pragma once

#include <memory>
#include <vector>

#include "parallel/comm/communicator.h"

namespace baton::comm {

// One communicator per rank (element r is rank r of `size`), each to be used from its own thread.
// Every communicator runs its operations on its own communication thread, in issue order; a
// collective starts once every rank has issued it, and each rank's thread reduces or copies its
// share of the elements (rank r: chunk r of all_reduce and broadcast, its own slice of all_gather and
// reduce_scatter), so every rank holds the result computed once, in rank order. Any CPU tensor is
// accepted; CUDA tensors are refused. A timeout (wait() or a peer that never arrives) aborts the
// whole group: every pending and later operation of every rank then fails with the reason.
std::vector<std::unique_ptr<Communicator>> make_inproc_communicators(int size);

}  // namespace baton::comm
