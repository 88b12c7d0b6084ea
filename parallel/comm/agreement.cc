// check_agreement: every rank's description gathered (lengths, then bytes as u8) and compared with rank 0's.
#include "parallel/comm/agreement.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "parallel/comm/collective_args.h"
#include "runtime/core/error.h"

namespace baton::comm {
namespace {

// One line per item; a newline inside an item is written as "\n" so that items stay one line each.
std::string encode(const Communicator& comm, const std::vector<std::string>& lines) {
  std::string text = detail::concat(comm.size(), " ranks (", comm.backend(), ")");
  for (const std::string& line : lines) {
    text += '\n';
    for (const char c : line) text += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return text;
}

std::vector<std::string> decode(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (!text.empty() && text.back() == '\n') lines.emplace_back();  // a last item that is empty
  return lines;
}

// The differing lines named per rank (the rest are counted).
constexpr int kDifferencesShown = 4;

// How `rank`'s lines (the first is "4 ranks (mpi)") differ from rank 0's, or "" when they do not.
std::string difference(int rank, const std::vector<std::string>& mine, const std::vector<std::string>& first,
                       std::string_view what) {
  if (mine[0] != first[0]) {
    return detail::concat("rank ", rank, " is in a communicator of ", mine[0], " where rank 0 is in one of ", first[0]);
  }
  const size_t common = std::min(mine.size(), first.size());
  size_t i = 1;
  while (i < common && mine[i] == first[i]) ++i;
  if (i < common) {
    std::string text = detail::concat("rank ", rank, " has '", mine[i], "' where rank 0 has '", first[i], "' (line ", i,
                                      " of ", what, ")");
    // A few more differing lines, so that a cause is named beside a consequence (--resume beside the
    // checkpoint directory it brings).
    int shown = 1, more = 0;
    for (size_t j = i + 1; j < common; ++j) {
      if (mine[j] == first[j]) continue;
      if (shown++ < kDifferencesShown) {
        text += detail::concat(", '", mine[j], "' where rank 0 has '", first[j], "' (line ", j, ")");
      } else {
        ++more;
      }
    }
    if (more > 0) text += detail::concat(" and ", more, " more line", more == 1 ? "" : "s");
    return text;
  }
  if (mine.size() > first.size()) {
    return detail::concat("rank ", rank, " has '", mine[i], "' (line ", i, " of ", what, ") where rank 0 has no line ",
                          i);
  }
  if (mine.size() < first.size()) {
    return detail::concat("rank ", rank, " has no line ", i, " where rank 0 has '", first[i], "' (line ", i, " of ",
                          what, ")");
  }
  return "";
}

}  // namespace

void check_agreement(Communicator& comm, std::string_view what, const std::vector<std::string>& lines) {
  // Host tensors, gathered through tensors of the communicator's device (a GPU for nccl).
  const Stream host = Stream::create(Device::cpu());
  const Stream s = comm.device().is_cpu() ? host : Stream::create(comm.device());
  const int n = comm.size();
  const std::string text = encode(comm, lines);
  const Tensor length =
      Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(text.size())}, Shape{1}, host).to(s.device(), s);
  const Tensor lengths = Tensor::empty(Shape{n}, DType::i64, s);
  comm.all_gather(length, lengths, s)->wait();
  const std::vector<int64_t> sizes = lengths.to_vector<int64_t>(s);
  const int64_t longest = *std::max_element(sizes.begin(), sizes.end());

  const Tensor mine_on_host = Tensor::empty(Shape{longest}, DType::u8, host);
  if (longest > 0) {
    std::memset(mine_on_host.data_ptr(), 0, static_cast<size_t>(longest));
    std::memcpy(mine_on_host.data_ptr(), text.data(), text.size());
  }
  const Tensor all = Tensor::empty(Shape{n, longest}, DType::u8, s);
  comm.all_gather(mine_on_host.to(s.device(), s), all, s)->wait();

  const Tensor all_on_host = all.to(Device::cpu(), s);
  s.synchronize();
  const auto* bytes = static_cast<const char*>(all_on_host.data_ptr());
  std::vector<std::vector<std::string>> described;
  for (int r = 0; r < n; ++r) {
    described.push_back(decode(std::string(bytes + r * longest, static_cast<size_t>(sizes[static_cast<size_t>(r)]))));
  }
  std::vector<int> differing;
  std::string details;
  for (int r = 1; r < n; ++r) {
    const std::string d = difference(r, described[static_cast<size_t>(r)], described[0], what);
    if (d.empty()) continue;
    differing.push_back(r);
    details += (details.empty() ? "" : "; ") + d;
  }
  BATON_CHECK(differing.empty(), what, " differs between ranks (", describe_ranks(differing),
              differing.size() == 1 ? " differs" : " differ", " from rank 0): ", details);
}

}  // namespace baton::comm
