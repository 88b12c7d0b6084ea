// Opening a file that must be a regular file without blocking: a FIFO, a device or a directory
// given where a data, weights, spec or config file belongs is refused at once, naming it, instead
// of blocking in open() until a writer appears.
#pragma once

#include <string>
#include <string_view>

namespace baton {

// Opens `path` read-only (close-on-exec) and returns its descriptor, which the caller closes. When it
// cannot be opened or is not a regular file, throws baton::Error "<failure>: <cause>", e.g.
// "spec.json: cannot open the model spec: a FIFO, expected a regular file". The open does not block.
int open_regular_file(const std::string& path, std::string_view failure);

// The whole content of the regular file `path` (same checks and messages as open_regular_file).
std::string read_regular_file(const std::string& path, std::string_view failure);

}  // namespace baton
