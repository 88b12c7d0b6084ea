// MemoryFormat names and placement equivalence.
#include "runtime/core/memory_format.h"

namespace baton {

const char* memory_format_name(MemoryFormat format) {
  return format == MemoryFormat::channels_last ? "channels-last" : "contiguous";
}

bool same_placement(const Shape& shape, MemoryFormat a, MemoryFormat b) {
  if (a == b) return true;
  return shape.rank() == 4 && ((shape[2] == 1 && shape[3] == 1) || shape[1] == 1);
}

}  // namespace baton
