// Mailbox: posting and taking messages under one lock, waits woken by every post or by stop().
#include "parallel/pipeline/mailbox.h"

#include "runtime/core/error.h"

namespace baton::parallel {

void Mailbox::post(const MailboxKey& key, Message message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    BATON_CHECK(!messages_.contains(key), "pipeline mailbox: a second ",
                key.kind == MessageKind::activation ? "activation" : "gradient", " message from stage ", key.from,
                " to stage ", key.to, " for micro-batch ", key.micro_batch);
    messages_.emplace(key, std::move(message));
  }
  posted_.notify_all();
}

Message Mailbox::take(const MailboxKey& key) {
  std::unique_lock<std::mutex> lock(mutex_);
  posted_.wait(lock, [&] { return stop_ || messages_.contains(key); });
  if (stop_) throw PipelineStopped{};
  auto node = messages_.extract(key);
  return std::move(node.mapped());
}

void Mailbox::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  posted_.notify_all();
}

bool Mailbox::stopped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_;
}

}  // namespace baton::parallel
