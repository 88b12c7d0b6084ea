// baton::Error's message assembly: the message, its source location and the context lines callers add.
#include "runtime/core/error.h"

#include <utility>

namespace baton {

Error::Error(std::string message, const char* file, int line)
    : std::runtime_error(message), message_(std::move(message)) {
  // __FILE__ is relative to the project root: the build maps the source prefix away.
  if (file != nullptr) location_ = std::string(file) + ":" + std::to_string(line);
  rebuild_what();
}

Error::Error(std::string message) : Error(std::move(message), nullptr, 0) {}

Error& Error::add_context(std::string context) {
  context_.push_back(std::move(context));
  rebuild_what();
  return *this;
}

void Error::rebuild_what() {
  what_ = message_;
  if (!location_.empty()) what_ += " [" + location_ + "]";
  for (const auto& c : context_) what_ += "\n  " + c;
}

namespace detail {

void throw_error(const char* file, int line, std::string message) { throw Error(std::move(message), file, line); }

}  // namespace detail
}  // namespace baton
