// Transfers between pipeline stages (see transfer.h).
#include "parallel/pipeline/transfer.h"

#include "runtime/core/memory_stats.h"

namespace baton::parallel {

LinkStreams LinkStreams::create(Device src, Device dst) {
  LinkStreams link;
  if (src == dst) return link;
  if (dst.is_cuda()) {
    link.copy = Stream::create(dst);
    link.alloc = link.copy;
    link.peer_access = src.is_cuda() && enable_peer_access(src, dst);
  } else if (src.is_cuda()) {
    link.copy = Stream::create(src);
    link.alloc = Stream::create(dst);
  } else {
    link.copy = Stream::create(dst);
    link.alloc = link.copy;
  }
  return link;
}

Message send_tensors(const std::vector<Tensor>& tensors, Context& src, Device dst, const LinkStreams& link,
                     const StepRecorder* recorder, std::pair<TraceMark, TraceMark>* marks) {
  Message message;
  auto produced = std::make_shared<Event>(src.device(), /*timing=*/false);
  produced->record(src.stream());
  if (src.device() == dst) {
    message.tensors = tensors;
    message.ready = std::move(produced);
    return message;
  }
  BATON_CHECK(link.copy && link.alloc, "pipeline transfer from ", src.device().str(), " to ", dst.str(),
              " has no copy stream");
  const Stream& copy = *link.copy;
  copy.wait(*produced);
  if (recorder && marks) marks->first = recorder->mark(copy);
  for (const Tensor& t : tensors) {
    if (!t.defined()) {
      message.tensors.emplace_back();
      continue;
    }
    Tensor out = Tensor::empty(t.shape(), t.dtype(), *link.alloc, t.format());  // a channels-last value stays so
    out.copy_from(t, copy);
    t.record_stream(copy);
    out.record_stream(copy);
    message.tensors.push_back(std::move(out));
  }
  if (recorder && marks) marks->second = recorder->mark(copy);
  message.ready = std::make_shared<Event>(copy.device(), /*timing=*/false);
  message.ready->record(copy);
  return message;
}

void receive_tensors(const Message& message, Context& ctx) {
  if (message.ready) ctx.stream().wait(*message.ready);
  for (const Tensor& t : message.tensors) {
    if (t.defined()) t.record_stream(ctx.stream());
  }
}

}  // namespace baton::parallel
