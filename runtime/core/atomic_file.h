// Writing files atomically: content goes to a temporary file beside the target, is flushed, then
// renamed over it, so a reader (or a crash) never sees a half-written file.
#pragma once

#include <string>
#include <string_view>

namespace baton {

// Throws baton::Error naming the path and the system error on failure; the target is untouched.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace baton
