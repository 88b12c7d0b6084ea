// baton::Error (an exception with a message plus context lines) and the BATON_CHECK macros.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton {

// Every failure in baton is a baton::Error: a one-line message saying what was expected, where it
// was raised (file:line), and optional context lines added as it propagates ("in layer conv1").
class Error : public std::runtime_error {
 public:
  Error(std::string message, const char* file, int line);
  explicit Error(std::string message);

  // Adds a context line (innermost first) and returns *this so it can be re-thrown.
  Error& add_context(std::string context);

  const std::string& message() const { return message_; }
  const std::vector<std::string>& context() const { return context_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  void rebuild_what();

  std::string message_;
  std::string location_;
  std::vector<std::string> context_;
  std::string what_;
};

// Allocation failure: states the request and the device's memory situation.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

namespace detail {

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

[[noreturn]] void throw_error(const char* file, int line, std::string message);

}  // namespace detail
}  // namespace baton

// Throws baton::Error with the streamed arguments unless `cond` holds.
#define BATON_CHECK(cond, ...)                                                                \
  do {                                                                                        \
    if (!(cond)) [[unlikely]] {                                                               \
      ::baton::detail::throw_error(__FILE__, __LINE__, ::baton::detail::concat(__VA_ARGS__)); \
    }                                                                                         \
  } while (0)

// Throws baton::Error with the streamed arguments.
#define BATON_FAIL(...) ::baton::detail::throw_error(__FILE__, __LINE__, ::baton::detail::concat(__VA_ARGS__))
