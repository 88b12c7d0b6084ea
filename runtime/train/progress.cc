// ProgressReporter: a progress bar (epoch, loss, lr, samples/s, ETA) redrawn in place on a terminal,
// one line every N steps otherwise.
#include "runtime/train/progress.h"

#include <cmath>
#include <cstdarg>
#include <vector>

namespace baton {

std::string formatted(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::vector<char> text(static_cast<size_t>(length > 0 ? length : 0) + 1);
  std::vsnprintf(text.data(), text.size(), format, again);
  va_end(again);
  return std::string(text.data(), text.size() - 1);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<int64_t>(seconds + 0.5);
  const int64_t h = total / 3600, m = (total % 3600) / 60, s = total % 60;
  char text[32];
  if (h > 0) {
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(s));
  } else {
    std::snprintf(text, sizeof(text), "%lld:%02lld", static_cast<long long>(m), static_cast<long long>(s));
  }
  return text;
}

ProgressReporter::ProgressReporter(std::FILE* out, bool interactive, int64_t every)
    : out_(out), interactive_(interactive), every_(every < 1 ? 1 : every) {}

void ProgressReporter::update(const ProgressUpdate& u) {
  if (out_ == nullptr) return;
  if (interactive_) {
    constexpr int kWidth = 24;
    const int filled = u.batches_per_epoch > 0 ? static_cast<int>(kWidth * u.batch / u.batches_per_epoch) : 0;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(out_, "\repoch %lld [%s] %lld/%lld  loss %.4f  lr %.4g  %.0f samples/s  ETA %s   ",
                 static_cast<long long>(u.epoch), bar.c_str(), static_cast<long long>(u.batch),
                 static_cast<long long>(u.batches_per_epoch), u.loss, u.lr, u.samples_per_second,
                 format_duration(u.eta_seconds).c_str());
    std::fflush(out_);
    bar_open_ = true;
    return;
  }
  if (u.step % every_ != 0) return;
  std::fprintf(out_, "epoch %lld step %lld (%lld/%lld): loss %.4f, lr %.4g, %.0f samples/s, ETA %s\n",
               static_cast<long long>(u.epoch), static_cast<long long>(u.step), static_cast<long long>(u.batch),
               static_cast<long long>(u.batches_per_epoch), u.loss, u.lr, u.samples_per_second,
               format_duration(u.eta_seconds).c_str());
  std::fflush(out_);
}

void ProgressReporter::message(const std::string& text) {
  if (out_ == nullptr) return;
  finish_epoch();
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void ProgressReporter::finish_epoch() {
  if (bar_open_ && out_ != nullptr) std::fprintf(out_, "\n");
  bar_open_ = false;
}

}  // namespace baton
