// Mailbox: tensors plus the event that marks them ready, handed between pipeline workers, keyed
// by (sender stage, receiver stage, micro-batch, kind); waits are interruptible by a stop flag.
// Each PipelineRun has its own.
#pragma once

#include <compare>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/core/stream.h"
#include "runtime/core/tensor.h"

namespace baton::parallel {

enum class MessageKind { activation, gradient };

struct MailboxKey {
  int from = 0;
  int to = 0;
  int micro_batch = 0;
  MessageKind kind = MessageKind::activation;
  auto operator<=>(const MailboxKey&) const = default;
};

// The tensors of one transfer (undefined where nothing flows) and the event after which they may
// be read on any stream (recorded on the producer's compute stream or on the copy stream).
struct Message {
  std::vector<Tensor> tensors;
  std::shared_ptr<Event> ready;
};

// Thrown inside a worker whose wait was cut short because another worker failed.
struct PipelineStopped {};

class Mailbox {
 public:
  // Hands over a message; a second message under the same key is an error (a schedule bug).
  void post(const MailboxKey& key, Message message);
  // Blocks until the message under `key` is posted (and removes it) or stop() is called (throws
  // PipelineStopped).
  Message take(const MailboxKey& key);
  // Wakes every waiter; later takes throw PipelineStopped (a mailbox serves one run).
  void stop();
  bool stopped() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable posted_;
  std::map<MailboxKey, Message> messages_;
  bool stop_ = false;
};

}  // namespace baton::parallel
