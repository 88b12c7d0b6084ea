// check_agreement: a collective check, before training starts, that every rank describes the same
// thing (the model fingerprint: one line per parameter "name dtype [shape]"), so that a rank built
// with another model or settings fails at once with a clear message instead of reducing garbage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parallel/comm/communicator.h"

namespace baton::comm {

// Collective over `comm` (two all_gathers): every rank passes its description of `what` ("the model
// fingerprint"), one line per item. Compares every rank's communicator size, backend and lines with
// rank 0's. On any difference every rank throws the same baton::Error naming the ranks that differ
// and, for each, the first differing line on both sides: "the model fingerprint differs between
// ranks (rank 1 differs from rank 0): rank 1 has 'fc.weight f32 [10, 64]' where rank 0 has
// 'fc.weight f32 [100, 64]' (line 18 of the model fingerprint)", followed by up to three more
// differing lines of that rank (", 'b' where rank 0 has 'c' (line 20)") and a count of the rest.
// Lines are numbered from 1.
void check_agreement(Communicator& comm, std::string_view what, const std::vector<std::string>& lines);

}  // namespace baton::comm
