// Backend-independent checks of what a communicator refuses (bad arguments) and reports (descriptions
// that differ between ranks).
#include <string>
#include <vector>

#include "parallel/comm/agreement.h"
#include "tests/parallel/comm/comm_checks.h"

namespace baton::comm::testing {

void check_agreement_cases(Communicator& comm) {
  const std::string what = "the model fingerprint";
  std::vector<std::string> model;
  for (int i = 1; i <= 20; ++i) model.push_back(detail::concat("layer", i, ".weight f32 [", i, ", 3]"));
  model[17] = "fc.weight f32 [100, 64]";  // line 18
  model[3] = "multi\nline";
  EXPECT_NO_THROW(check_agreement(comm, what, model)) << where(comm);
  EXPECT_NO_THROW(check_agreement(comm, "nothing", {})) << where(comm);
  if (comm.size() < 2) return;

  std::vector<std::string> mine = model;
  if (comm.rank() == 1) mine[17] = "fc.weight f32 [10, 64]";
  const std::string one = baton::testing::error_message([&] { check_agreement(comm, what, mine); });
  EXPECT_NE(one.find("the model fingerprint differs between ranks (rank 1 differs from rank 0): rank 1 has "
                     "'fc.weight f32 [10, 64]' where rank 0 has 'fc.weight f32 [100, 64]' (line 18 of the model "
                     "fingerprint)"),
            std::string::npos)
      << one << " on " << where(comm);

  if (comm.size() < 3) return;
  mine = model;
  if (comm.rank() == 1) mine.push_back("extra.bias f32 [3]");
  if (comm.rank() == comm.size() - 1) mine.pop_back();
  const std::string two = baton::testing::error_message([&] { check_agreement(comm, what, mine); });
  const std::string last = std::to_string(comm.size() - 1);
  EXPECT_NE(
      two.find("(ranks 1, " + last +
               " differ from rank 0): rank 1 has 'extra.bias f32 [3]' (line 21 of the "
               "model fingerprint) where rank 0 has no line 21; rank " +
               last +
               " has no line 20 where rank 0 has 'layer20.weight f32 [20, 3]' (line 20 of the model fingerprint)"),
      std::string::npos)
      << two << " on " << where(comm);
}

void check_refused_arguments(Communicator& comm) {
  const Stream s = rank_stream();
  const int n = comm.size();
  const Tensor f = baton::testing::copy_to(rank_input(Shape{3}, DType::f32, comm.rank(), 5), s);
  const std::string on = detail::concat(" on rank ", comm.rank(), " of ", n, " (", comm.backend(), ")");
  EXPECT_ERROR_MENTIONS(on + ": buffer is an undefined tensor", comm.all_reduce(Tensor(), ReduceOp::sum, s));
  EXPECT_ERROR_MENTIONS("buffer has dtype u8, which cannot be reduced",
                        comm.all_reduce(Tensor::empty(Shape{2}, DType::u8, s), ReduceOp::sum, s));
  EXPECT_ERROR_MENTIONS("mean is defined for floating dtypes only",
                        comm.all_reduce(Tensor::empty(Shape{2}, DType::i32, s), ReduceOp::mean, s));
  EXPECT_ERROR_MENTIONS(
      detail::concat("output has 5 elements [5] but must hold ", n, " ranks x 3 elements of input [3] = ", 3 * n),
      comm.all_gather(f, Tensor::empty(Shape{5}, DType::f32, s), s));
  EXPECT_ERROR_MENTIONS("output has dtype f64 but input has f32",
                        comm.all_gather(f, Tensor::empty(Shape{3 * n}, DType::f64, s), s));
  EXPECT_ERROR_MENTIONS(detail::concat("input has 3 elements [3] but must hold ", n, " ranks x 2 elements"),
                        comm.reduce_scatter(f, Tensor::empty(Shape{2}, DType::f32, s), ReduceOp::sum, s));
  EXPECT_ERROR_MENTIONS(detail::concat("root ", n, " is not a rank of this communicator (0..", n - 1, ")"),
                        comm.broadcast(f, n, s));
  EXPECT_ERROR_MENTIONS(
      detail::concat("send to rank ", comm.rank(), on, ": peer ", comm.rank(), " is this rank itself"),
      comm.send(f, comm.rank(), s));
  EXPECT_ERROR_MENTIONS("peer -1 is not a rank of this communicator", comm.recv(f, -1, s));
  EXPECT_ERROR_MENTIONS("the timeout must be positive", comm.set_timeout(std::chrono::milliseconds(0)));
}

}  // namespace baton::comm::testing
