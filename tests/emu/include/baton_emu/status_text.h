// The name and description of each status code of an emulated library, one table for its
// *GetErrorName / *GetErrorString calls.
#pragma once

#include <cstddef>

namespace baton_emu {

template <typename Status>
struct StatusText {
  Status status;
  const char* name;
  const char* description;
};

// The entry of `status` in `table`, or nullptr when the table does not list it.
template <typename Status, size_t N>
const StatusText<Status>* find_status(const StatusText<Status> (&table)[N], Status status) {
  for (const StatusText<Status>& entry : table) {
    if (entry.status == status) return &entry;
  }
  return nullptr;
}

}  // namespace baton_emu
